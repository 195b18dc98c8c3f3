"""What a rank reports to the test: ``emit(tag, rank, text)`` appends the line
``<tag> <rank> <text>`` to its own file in $COMM_TEST_OUT (ranks' stdout lines
can interleave under mpiexec) and prints it."""
import os


def emit(tag, rank, text):
    line = f"{tag} {rank} {text}"
    d = os.environ.get("COMM_TEST_OUT")
    if d:
        with open(os.path.join(d, f"rank{rank}.txt"), "a") as f:
            f.write(line + "\n")
    print(line, flush=True)
