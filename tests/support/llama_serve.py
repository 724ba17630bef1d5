"""llama.cpp's HTTP server, through ``xllamacpp``, as a child process of the tests.

``python -m tests.support.llama_serve MODEL --slots N --context TOKENS [--http-threads N] [--seed S] [--ignore-eos]`` prints the server's
address (``http://127.0.0.1:PORT``) as its first stdout line and serves until its stdin closes or it
receives SIGTERM. llama.cpp's log goes to stderr.

A process of its own rather than a thread of the test session: llama.cpp installs its own SIGINT
and SIGTERM handlers when it starts (Ctrl-C would no longer reach pytest), a crash in native code
must not take the test session with it, and a test stops the server mid-run by ending the process.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Start the server, print its address, serve until stdin closes or SIGTERM."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.llama_serve", description=__doc__.split("\n")[0]
    )
    parser.add_argument("model")
    parser.add_argument("--slots", type=int, default=1, help="parallel sequences (llama-server -np)")
    parser.add_argument("--context", type=int, default=512, help="context tokens per slot")
    parser.add_argument(
        "--http-threads", type=int, default=-1, help="llama-server --threads-http (-1: its default)"
    )
    parser.add_argument(
        "--seed", type=int, default=42, help="the sampler's seed (fixed: same prompt, same answer)"
    )
    parser.add_argument(
        "--ignore-eos",
        action="store_true",
        help="never end a turn: answers run to the token limit or the context",
    )
    args = parser.parse_args(argv)

    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_parallel = args.slots
    params.n_ctx = args.context * args.slots  # llama.cpp splits n_ctx evenly between the slots
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # any free port; listening_address says which
    params.ui = False
    params.warmup = False
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    params.n_threads_http = args.http_threads
    params.sampling.seed = args.seed
    params.sampling.ignore_eos = args.ignore_eos
    server = xllamacpp.Server(params)
    # Ours again: llama.cpp's handlers would ignore SIGTERM until its loop notices.
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    print(server.listening_address, flush=True)

    def stdin_closed() -> None:
        sys.stdin.read()
        done.set()

    threading.Thread(target=stdin_closed, daemon=True).start()
    done.wait()
    del server
    return 0


if __name__ == "__main__":
    sys.exit(main())
