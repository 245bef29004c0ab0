"""The broker process of tests/clients/test_durability.py: a kafkapy broker until killed.

Run as ``python kill_child.py <data dir> [<settings as JSON>]`` with the project on
PYTHONPATH. Starts ``kafkapy.Broker(settings, data_dir=<data dir>)`` on a free port of
127.0.0.1, prints ``bootstrap <host:port>`` (one flushed line), then serves until it is killed
(the test's ``kill -9``) or its stdin closes (the test went away: stop cleanly, leave no
orphan).
"""

from __future__ import annotations

import json
import sys

from kafkapy.broker import Broker


def main() -> None:
    data_dir = sys.argv[1]
    settings = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    with Broker(settings, data_dir=data_dir) as broker:
        print("bootstrap", broker.bootstrap_servers, flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
