#!/usr/bin/env bash
# Deploy the demo's digits model: save -> serve -> curl (README.md, "Deploy").
#
#   bash examples/serve_digits.sh
#
# 1. save:  the demo (examples/digits.py) trains its LeNet briefly (--quick) and
#           writes $DIR/lenet_digits.fwmodel (--export-dir);
# 2. serve: python -m fw.inference.serve, on 127.0.0.1:$PORT, in the background;
# 3. curl:  the model's inputs and outputs, then a prediction for one test image
#           (examples/data/digit_request.json, a handwritten 8).
# The server gets SIGTERM (a graceful stop) when the script ends, even on an error.
# Settings: PORT (default 8866), DEPLOY_DIR (default build/deploy), FW_PYTHON (a Python
# with fw installed, instead of hatch's environment; tests/test_deploy_readme.py sets it).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${PORT:-8866}
DIR=${DEPLOY_DIR:-build/deploy}
if [ -z "${FW_PYTHON:-}" ]; then
  hatch run native  # creates the environment and builds fw-core's extension when needed
  FW_PYTHON="$(hatch env find)/bin/python"
fi
PY=$FW_PYTHON

# 1. save
"$PY" examples/digits.py --quick --export-dir "$DIR"

# 2. serve (and wait until it answers /ready: at most about a minute)
"$PY" -m fw.inference.serve "$DIR/lenet_digits.fwmodel" --port "$PORT" &
server=$!
trap 'kill -TERM $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
curl -sf --retry 60 --retry-connrefused --retry-delay 1 --max-time 5 "localhost:$PORT/ready"
echo

# 3. curl
curl -s "localhost:$PORT/v1/models"
echo
curl -s "localhost:$PORT/v1/models/lenet_digits:predict" -d @examples/data/digit_request.json
echo
