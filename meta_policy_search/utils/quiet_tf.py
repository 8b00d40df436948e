"""Import TensorFlow without its start-up noise on CPU machines.

On a machine without a GPU, ``import tensorflow`` and its first device query print lines such as
``Could not find cuda drivers``, the CPU-instruction note and ``E0000 ... failed call to cuInit:
... CUDA error``, even with ``TF_CPP_MIN_LOG_LEVEL=2``: they are written by absl before the log
level applies (issue 9). :func:`import_tensorflow` captures the process's stderr (file
descriptor 2, where the C++ code writes) while TensorFlow loads and initialises its devices, then
re-emits every line except those known, harmless ones. Set ``META_POLICY_SEARCH_TF_LOGS=1`` to
see everything.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from typing import Any

TF_START_UP_NOISE = re.compile(
    "|".join((
        r"All log messages before absl::InitializeLog\(\) is called are written to STDERR",
        r"cudart_stub\.cc.*Could not find cuda drivers",
        r"cpu_feature_guard\.cc",
        r"^To enable the following instructions: .* rebuild TensorFlow",
        r"cuda_platform\.cc.*failed call to cuInit",
        r"cuda_(executor|diagnostics)\.cc",
        r"Unable to register cu(DNN|FFT|BLAS) factory",
        r"computation_placer\.cc.*already registered",
        r"oneDNN custom operations are on",
        r"TF-TRT Warning: Could not find TensorRT",
        r"absl::InitializeLog",
    ))
)
"""Lines of TensorFlow's start-up that :func:`import_tensorflow` drops."""


def import_tensorflow() -> Any:
    """``import tensorflow`` and initialise its devices, dropping the start-up noise.

    Returns:
        The ``tensorflow`` module.
    """
    if "tensorflow" in sys.modules:
        return sys.modules["tensorflow"]
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if os.environ.get("META_POLICY_SEARCH_TF_LOGS"):
        # this function is where TensorFlow gets imported, once its log level is set
        import tensorflow as tf

        return tf
    sys.stderr.flush()
    saved_fd = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)
        try:
            # this function is where TensorFlow gets imported, once its log level is set
            import tensorflow as tf

            tf.config.list_physical_devices()  # the cuInit attempt happens here
        finally:
            sys.stderr.flush()
            os.dup2(saved_fd, 2)
            os.close(saved_fd)
            captured.seek(0)
            for line in captured.read().decode("utf-8", errors="replace").splitlines():
                if line.strip() and not TF_START_UP_NOISE.search(line):
                    print(line, file=sys.stderr)
    return tf
