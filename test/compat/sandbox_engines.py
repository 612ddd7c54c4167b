"""Drives the published h2o-engine-manager client, unmodified, against a gateway and an operator.

Usage: python sandbox_engines.py <aiem_url> <workspace>
An administrator defines a sandbox image and template; a user creates a sandbox engine, waits for
it to run, is refused H2O Drive and Secure Store (no backend here), terminates and deletes it;
another user never sees it. Prints one line per step and exits non-zero on the first mismatch.
"""
import inspect
import json
import sys

from compat_login import connection
from h2o_engine_manager.clients.exception import CustomApiException
from h2o_engine_manager.clients.sandbox.h2o_drive.client import H2ODriveClient
from h2o_engine_manager.clients.sandbox.h2o_secure_store.client import H2OSecureStoreClient
from h2o_engine_manager.clients.sandbox_engine.client import SandboxEngineClient
from h2o_engine_manager.clients.sandbox_engine.engine import SandboxEngine
from h2o_engine_manager.clients.sandbox_engine_image.client import SandboxEngineImageClient
from h2o_engine_manager.clients.sandbox_engine_image.image import SandboxEngineImage
from h2o_engine_manager.clients.sandbox_engine_template.client import SandboxEngineTemplateClient
from h2o_engine_manager.clients.sandbox_engine_template.template import SandboxEngineTemplate

admin = connection(sys.argv[1], "admin")
user = connection(sys.argv[1], "user")
other = connection(sys.argv[1], "other")
parent = f"workspaces/{sys.argv[2]}"
WAIT = 120


def check(step, condition):
    print(("ok   " if condition else "FAIL ") + step)
    if not condition:
        sys.exit(1)


def state(engine):
    return str(engine.state).split(".")[-1]


def refused(call):
    """The status and the error body of a call that must fail."""
    try:
        call()
    except CustomApiException as e:
        return e.status, json.loads(e.body)
    return 200, {}


# 1.4 templates have no running limit; 1.10 requires one.
has_running_limit = "max_running_duration" in inspect.signature(SandboxEngineTemplate.__init__).parameters
limits = {"max_running_duration": "0s"} if has_running_limit else {}

images = SandboxEngineImageClient(admin)
image = images.create_sandbox_engine_image(
    parent=parent,
    sandbox_engine_image=SandboxEngineImage(image="python:3.12-slim", display_name="Python 3.12"),
    sandbox_engine_image_id="python",
)
check("an administrator creates a sandbox image", image.name == f"{parent}/sandboxEngineImages/python" and image.enabled)

templates = SandboxEngineTemplateClient(admin)
template = templates.create_sandbox_engine_template(
    parent=parent,
    sandbox_engine_template=SandboxEngineTemplate(
        memory_bytes_limit="1Gi",
        max_idle_duration="1h",
        milli_cpu_limit=500,
        environmental_variables={"GREETING": "hello"},
        **limits,
    ),
    sandbox_engine_template_id="small",
)
check(
    "the template's unset requests default to its limits",
    template.milli_cpu_request == 500 and template.memory_bytes_request == template.memory_bytes_limit,
)
template.display_name = "Small"
updated = templates.update_sandbox_engine_template(sandbox_engine_template=template)
check("an update with every field keeps the template valid", updated.display_name == "Small")
status, body = refused(
    lambda: templates.create_sandbox_engine_template(
        parent=parent,
        sandbox_engine_template=SandboxEngineTemplate(
            memory_bytes_limit="1Gi", max_idle_duration="1h", milli_cpu_limit=100, milli_cpu_request=200, **limits
        ),
        sandbox_engine_template_id="bad",
    )
)
check(
    "a request above its limit is refused, naming the field",
    status == 400 and "milli_cpu_request" in json.dumps(body),
)

engines = SandboxEngineClient(user)
created = engines.create_sandbox_engine(
    parent=parent,
    sandbox_engine=SandboxEngine(
        sandbox_engine_image=image.name, sandbox_engine_template=template.name, display_name="My sandbox"
    ),
    sandbox_engine_id="sbx1",
)
check("a user creates a sandbox engine, which starts", state(created) == "STATE_STARTING")
check("the engine keeps a snapshot of its template", created.sandbox_engine_template_info is not None)
running = engines.wait(name=created.name, timeout_seconds=WAIT)
check("wait returns the engine once it runs", running is not None and state(running) == "STATE_RUNNING")
if hasattr(running, "pending_reason"):
    check("a running engine has no pending reason", str(running.pending_reason).endswith("UNSPECIFIED"))

later = templates.get_sandbox_engine_template(name=template.name)
later.milli_cpu_limit = 1000
templates.update_sandbox_engine_template(sandbox_engine_template=later)
again = engines.get_sandbox_engine(name=created.name)
check(
    "a later template edit does not change the engine",
    again.sandbox_engine_template_info.milli_cpu_limit == 500,
)
check(
    "the user lists the engine",
    [e.name for e in engines.list_all_sandbox_engines(parent=parent)] == [created.name],
)
check("another user sees none of it", SandboxEngineClient(other).list_all_sandbox_engines(parent=parent) == [])
status, _ = refused(lambda: SandboxEngineClient(other).get_sandbox_engine(name=created.name))
check("another user's get is NOT_FOUND, as for a missing engine", status == 404)

status, body = refused(
    lambda: H2ODriveClient(user).download_file(
        name=created.name, remote_path="data.csv", local_path="/workspace/data.csv"
    )
)
check("H2O Drive is refused as a failed precondition, naming what is missing", status == 400 and "H2O Drive is not configured" in body.get("message", ""))
status, body = refused(
    lambda: H2OSecureStoreClient(user).reveal_secret_to_file(
        name=created.name, secret_version="workspaces/w/secrets/s/versions/latest", path="/home/sandbox/.tok"
    )
)
check("H2O Secure Store is refused as a failed precondition", status == 400 and "Secure Store is not configured" in body.get("message", ""))

image.enabled = False
images.update_sandbox_engine_image(sandbox_engine_image=image)
status, body = refused(
    lambda: engines.create_sandbox_engine(
        parent=parent,
        sandbox_engine=SandboxEngine(sandbox_engine_image=image.name, sandbox_engine_template=template.name),
        sandbox_engine_id="sbx2",
    )
)
check("a disabled image cannot start new engines", status == 400 and "sandbox_engine_image" in json.dumps(body))

stopping = engines.terminate_sandbox_engine(name=created.name)
check("terminate answers the engine, stopping", state(stopping) == "STATE_TERMINATING")
stopped = engines.wait(name=created.name, timeout_seconds=WAIT)
check("wait returns the engine once terminated", stopped is not None and state(stopped) == "STATE_TERMINATED")
status, body = refused(
    lambda: H2ODriveClient(user).download_file(name=created.name, remote_path="a", local_path="/workspace/a")
)
check("in-engine calls on a terminated engine are refused as a failed precondition", status == 400 and "not running" in body.get("message", ""))
status, _ = refused(lambda: engines.terminate_sandbox_engine(name=created.name))
check("terminating it again is refused", status == 400)

engines.delete_sandbox_engine(name=created.name)
check("wait returns None once the engine is gone", engines.wait(name=created.name, timeout_seconds=WAIT) is None)
status, _ = refused(lambda: engines.get_sandbox_engine(name=created.name))
check("a deleted engine is NOT_FOUND", status == 404)
print("all steps passed")
