"""The compiled hot paths. Everything else is declared in pyproject.toml.

Each extension is the single implementation of its hot path (no pure-Python twin):
  kafkapy._codec    wire primitives and the schema-driven struct encoder/decoder
  kafkapy._records  CRC32C and record batches: header view, validation scan, records, builder
  kafkapy._frames   cuts size-prefixed request frames out of a TCP byte stream
  kafkapy._selector Kafka's network Selector: an epoll set, frames in, responses out
  kafkapy._log      the log's hot paths: index lookup, the append/recovery batch walk
  kafkapy._arrow    record batches decoded into Arrow column buffers (the Spark reader)
  kafkapy._legacy   message formats v0/v1 converted to and from record batches (old clients)
  kafkapy._fetch    the Fetch request's decode and the Fetch response's encode (no records)
  kafkapy._produce  the Produce request decoded from its frame, its response encoded (v3-11)
"""

import os

from Cython.Build import cythonize
from setuptools import Extension, setup

# Cythonize and compile the extensions in parallel, one job per CPU this process may use:
# the C compile of the generated modules is most of a build from the sdist.
JOBS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

EXTENSIONS = [
    Extension("kafkapy._codec", ["kafkapy/_codec.pyx"]),
    Extension("kafkapy._records", ["kafkapy/_records.pyx"], include_dirs=["kafkapy"]),
    Extension("kafkapy._frames", ["kafkapy/_frames.pyx"]),
    Extension("kafkapy._selector", ["kafkapy/_selector.pyx"], include_dirs=["kafkapy"]),
    Extension("kafkapy._log", ["kafkapy/_log.pyx"], include_dirs=["kafkapy"]),
    Extension("kafkapy._arrow", ["kafkapy/_arrow.pyx"], include_dirs=["kafkapy"]),
    # CRC-32 (IEEE) of the legacy messages: zlib's, which CPython's zlib module links too.
    Extension("kafkapy._legacy", ["kafkapy/_legacy.pyx"], include_dirs=["kafkapy"],
              libraries=["z"]),
    Extension("kafkapy._fetch", ["kafkapy/_fetch.pyx"], include_dirs=["kafkapy"]),
    Extension("kafkapy._produce", ["kafkapy/_produce.pyx"], include_dirs=["kafkapy"]),
    Extension("kafkapy._replica", ["kafkapy/_replica.pyx"]),
]

setup(
    # Bounds checks are switched off per module, in its header, where its own checks make
    # them redundant; nothing is switched off globally.
    ext_modules=cythonize(EXTENSIONS, language_level=3, nthreads=JOBS if JOBS > 1 else 0),
    options={"build_ext": {"parallel": JOBS}},
)
