"""``python -m fw.distributed.launch``: see `fw.distributed.launch.main`."""

from fw.distributed.launch.main import main

if __name__ == "__main__":
    main()
