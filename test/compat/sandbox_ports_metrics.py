"""Drives the published h2o-engine-manager client, unmodified: ports and metrics of a sandbox engine.

Usage: python sandbox_ports_metrics.py <aiem_url> <workspace>
An administrator defines a sandbox image and template; a user creates a sandbox engine from them,
exposes a port and waits for it to be READY, switches it public and back, lists and deletes it
(wait then returns None), and reads the engine's metrics (1.4.0 also with its disk_path). Another
user cannot see the port. Prints one line per step and exits non-zero on the first mismatch.
"""
import inspect
import json
import sys
import time

from compat_login import connection
from compat_steps import LIMITS, check, refused, state
from h2o_engine_manager.clients.sandbox.metrics.client import MetricsClient
from h2o_engine_manager.clients.sandbox.port.client import PortClient
from h2o_engine_manager.clients.sandbox.port.port import Port
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
MEMORY_LIMIT = 1024**3


image = SandboxEngineImageClient(admin).create_sandbox_engine_image(
    parent=parent,
    sandbox_engine_image=SandboxEngineImage(image="python:3.12-slim"),
    sandbox_engine_image_id="python",
)
template = SandboxEngineTemplateClient(admin).create_sandbox_engine_template(
    parent=parent,
    sandbox_engine_template=SandboxEngineTemplate(
        memory_bytes_limit="1Gi", max_idle_duration="1h", milli_cpu_limit=500, **LIMITS
    ),
    sandbox_engine_template_id="small",
)
engines = SandboxEngineClient(user)
engine = engines.create_sandbox_engine(
    parent=parent,
    sandbox_engine=SandboxEngine(sandbox_engine_image=image.name, sandbox_engine_template=template.name),
    sandbox_engine_id="sbx",
)
running = engines.wait(name=engine.name, timeout_seconds=WAIT)
check("a user's sandbox engine runs", running is not None and state(running) == "STATE_RUNNING")

ports = PortClient(user)
status, body = refused(lambda: ports.create_port(parent=engine.name, port=Port(), port_id="80"))
check("a port below 1024 is refused, naming port_id", status == 400 and "port_id" in body.get("message", ""))
created = ports.create_port(parent=engine.name, port=Port(display_name="web"), port_id="8080")
check(
    "a user exposes port 8080, reachable inside the cluster",
    created.name == f"{engine.name}/ports/8080"
    and created.internal_url.startswith("http://")
    and created.internal_url.endswith(":8080")
    and created.public_url == "",
)
status, _ = refused(lambda: ports.create_port(parent=engine.name, port=Port(), port_id="8080"))
check("the same port twice is ALREADY_EXISTS", status == 409)
ready = ports.wait(name=created.name, timeout_seconds=WAIT)
check("wait returns the port once it is READY", ready is not None and state(ready) == "STATE_READY")
status, _ = refused(lambda: PortClient(other).get_port(name=created.name))
check("another user's get is NOT_FOUND", status == 404)

ready.public = True
public = ports.update_port(port=ready, update_mask=["public"])
check("switching it public gives a public URL", public.public and public.public_url.startswith("https://"))
public = ports.wait(name=created.name, timeout_seconds=WAIT)
check("the public port is READY", state(public) == "STATE_READY")
public.public = False
public.display_name = "renamed"
internal = ports.update_port(port=public, update_mask=["public", "display_name"])
check(
    "switching it back clears the public URL",
    not internal.public and internal.public_url == "" and internal.display_name == "renamed",
)

ports.create_port(parent=engine.name, port=Port(), port_id="9000")
listed, token = ports.list_ports(parent=engine.name)
check("the user lists both ports", [p.name.split("/")[-1] for p in listed] == ["8080", "9000"] and token == "")
ports.delete_port(name=created.name)
check("wait returns None once the port is deleted", ports.wait(name=created.name, timeout_seconds=WAIT) is None)
status, _ = refused(lambda: ports.get_port(name=created.name))
check("a deleted port is NOT_FOUND", status == 404)

metrics_client = MetricsClient(user)
deadline = time.time() + WAIT
metrics = metrics_client.read_metrics(name=engine.name)
while metrics.memory.current_bytes == 0 and time.time() < deadline:
    time.sleep(2)
    metrics = metrics_client.read_metrics(name=engine.name)
check("the memory limit is the template's", metrics.memory.limit_bytes == MEMORY_LIMIT)
check("memory in use is reported", 0 < metrics.memory.current_bytes <= MEMORY_LIMIT)
check("the CPU ratio is between 0 and 1", 0 <= metrics.cpu.usage_ratio <= 1)
check(
    "the sandbox disk has a size and free space",
    metrics.disk.total_bytes > 0 and 0 <= metrics.disk.available_bytes <= metrics.disk.total_bytes,
)
check("the sample has a time", metrics.collect_time is not None)
strict = metrics_client.read_metrics(name=engine.name, strict_mode=True)
check("strict mode answers once every metric is there", strict.disk.total_bytes > 0)
if "disk_path" in inspect.signature(MetricsClient.read_metrics).parameters:
    at_root = metrics_client.read_metrics(name=engine.name, disk_path="/")
    check("1.4.0's disk_path is honoured", at_root.disk.total_bytes > 0)
status, _ = refused(lambda: MetricsClient(other).read_metrics(name=engine.name))
check("another user cannot read the metrics", status == 404)

engines.terminate_sandbox_engine(name=engine.name)
engines.wait(name=engine.name, timeout_seconds=WAIT)
status, body = refused(lambda: ports.list_ports(parent=engine.name))
check("port calls on a terminated engine are a failed precondition", status == 400)
print("all steps passed")
