"""Steps the compatibility scripts share: checking a step, reading a refusal, a state's name."""
import inspect
import json
import sys

from h2o_engine_manager.clients.exception import CustomApiException
from h2o_engine_manager.clients.sandbox_engine_template.template import SandboxEngineTemplate


def check(step, condition):
    """Prints the step, and exits non-zero when it does not hold."""
    print(("ok   " if condition else "FAIL ") + step)
    if not condition:
        sys.exit(1)


def state(resource):
    """`STATE_RUNNING` and the like, whatever enum the client release uses."""
    return str(resource.state).split(".")[-1]


def refused(call):
    """The status and the error body of a call that must fail."""
    try:
        call()
    except CustomApiException as e:
        return e.status, json.loads(e.body)
    return 200, {}


# 1.4 templates have no running limit; 1.10 requires one.
HAS_RUNNING_LIMIT = "max_running_duration" in inspect.signature(SandboxEngineTemplate.__init__).parameters
LIMITS = {"max_running_duration": "0s"} if HAS_RUNNING_LIMIT else {}
