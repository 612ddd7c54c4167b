"""Drives the published h2o-engine-manager client, unmodified, against a gateway and an operator.

Usage: python sandbox_engines.py <aiem_url> <workspace>
An administrator defines a sandbox image and template; a user creates a sandbox engine, waits for
it to run, is refused H2O Drive and Secure Store (no backend here), terminates and deletes it;
another user never sees it. Prints one line per step and exits non-zero on the first mismatch.
"""
import json
import os
import sys
import threading
import time

from compat_login import connection
from compat_steps import LIMITS, check, refused, state
from h2o_engine_manager.clients.sandbox.filesystem.client import FilesystemClient
from h2o_engine_manager.clients.sandbox.h2o_drive.client import H2ODriveClient
from h2o_engine_manager.clients.sandbox.h2o_secure_store.client import H2OSecureStoreClient
from h2o_engine_manager.clients.sandbox.process.client import ProcessClient
from h2o_engine_manager.clients.sandbox.process.ps import Process
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
        **LIMITS,
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
            memory_bytes_limit="1Gi", max_idle_duration="1h", milli_cpu_limit=100, milli_cpu_request=200, **LIMITS
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

SCRIPT = b"""import sys, time
print("start", flush=True)
sys.stderr.write("warning\\n"); sys.stderr.flush()
time.sleep(0.5)
print("done", flush=True)
sys.exit(3)
"""
files = FilesystemClient(user)
written = files.write_file(name=created.name, path="/workspace/job/hello.py", content=SCRIPT, create_parent_directories=True)
check("a user writes a Python script into the sandbox", written.file_info.size == len(SCRIPT))
check("and reads it back byte for byte", files.read_file(name=created.name, path="/workspace/job/hello.py").content == SCRIPT)
listed = files.list_directory(name=created.name, path="/workspace/job")
check("the directory lists the file", [f.path for f in listed] == ["/workspace/job/hello.py"])
check("stat reports its size", files.stat_file(name=created.name, path="/workspace/job/hello.py").size == len(SCRIPT))
status, body = refused(lambda: files.read_file(name=created.name, path="/workspace/../../etc/passwd"))
check("a path escaping the sandbox root is refused, naming the field", status == 400 and "path" in json.dumps(body))
status, _ = refused(lambda: files.read_file(name=created.name, path="/workspace/missing.txt"))
check("reading a missing file is NOT_FOUND", status == 404)
for parents in (False, True):
    status, body = refused(
        lambda: files.write_file(name=created.name, path="/workspace/job/hello.py/x", content=b"x", create_parent_directories=parents)
    )
    check(f"writing below a file is refused, naming the field (create_parent_directories={parents})", status == 400 and '"path"' in json.dumps(body))
    status, body = refused(
        lambda: files.make_directory(name=created.name, path="/workspace/job/hello.py/d", create_parent_directories=parents)
    )
    check(f"a folder below a file is refused, naming the field (create_parent_directories={parents})", status == 400 and '"path"' in json.dumps(body))
status, _ = refused(lambda: FilesystemClient(other).read_file(name=created.name, path="/workspace/job/hello.py"))
check("another user cannot read the sandbox's files", status == 404)

processes = ProcessClient(user)
pending = processes.create_process(
    parent=created.name,
    process=Process(command="python3", args=["hello.py"], working_directory="/workspace/job"),
    process_id="hello",
)
check("a process is created pending", state(pending) == "STATE_PENDING")
starter = threading.Timer(1.0, lambda: processes.start_process(name=pending.name))
starter.start()
chunks = list(processes.stream_output(name=pending.name))
starter.join()
ended = processes.get_process(name=pending.name)
check("the stream, opened before the start, ends when the process does", state(ended) == "STATE_FAILED")
check("the exit code is the script's", ended.exit_code == 3)
if hasattr(processes, "read_output_frames"):
    tagged = lambda tag: b"".join(c.data for c in chunks if str(c.stream).endswith(tag))
    check("streamed stdout is tagged as such", tagged("STDOUT") == b"start\ndone\n")
    check("streamed stderr is tagged as such", tagged("STDERR") == b"warning\n")
    frames = processes.read_output_frames(name=pending.name)
    check("output frames keep the streams apart", b"".join(f["data"] for f in frames if str(f["stream"]).endswith("STDERR")) == b"warning\n")
else:
    check("1.4 drains the stream to its end", chunks == [] or all(c for c in chunks))
combined = processes.read_output(name=pending.name)
# Both streams, in the order their chunks arrived (which pipe delivers first is the kernel's choice).
check("read_output combines both streams", sorted(combined) == sorted(b"start\ndone\nwarning\n") and combined.endswith(b"done\n"))
check("read_output of stdout alone", processes.read_output(name=pending.name, output_stream="OUTPUT_STREAM_STDOUT") == b"start\ndone\n")

sleeper = processes.create_process(
    parent=created.name,
    process=Process(command="python3", args=["-c", "import time; time.sleep(300)"]),
    process_id="sleeper",
    auto_run=True,
)
check("auto_run starts the process at once", state(sleeper) == "STATE_RUNNING")
processes.send_signal(name=sleeper.name, signal=15)
stopped_process = processes.wait_process(name=sleeper.name)
check("a signal ends a long-running process, which failed", state(stopped_process) == "STATE_FAILED" and stopped_process.exit_code == 143)
status, _ = refused(lambda: processes.send_signal(name=sleeper.name, signal=15))
check("a signal to an ended process is refused", status == 400)
PROBE = 'printf "%s|%s|%s\\n" "$GREETING" "$OWN" "$(id -u):$(id -g)"; echo home > "$HOME/.probe"; env'
probe = processes.create_process(
    parent=created.name,
    process=Process(command="sh", args=["-c", PROBE], environment_variables={"OWN": "mine"}),
    process_id="probe",
    auto_run=True,
)
check("a process exits 0", processes.wait_process(name=probe.name).exit_code == 0)
first, *env_lines = processes.read_output(name=probe.name, output_stream="OUTPUT_STREAM_STDOUT").decode().splitlines()
check("a process sees the template's variables and its own, as uid and gid 1000", first == "hello|mine|1000:1000")
check("its HOME is the sandbox's home folder", files.read_file(name=created.name, path="/home/sandbox/.probe").content == b"home\n")
SHARED = {"PATH", "HOME", "HOSTNAME", "PWD", "OLDPWD", "SHLVL", "_", "LANG", "TERM"}
leaked = sorted({line.split("=", 1)[0] for line in env_lines if "=" in line} & set(os.environ) - SHARED)
check("and nothing of the environment of the machine that runs the product", leaked == [])
unknown = processes.create_process(
    parent=created.name, process=Process(command="no-such-command"), process_id="unknown", auto_run=True
)
check("a command that is not found exits 127", processes.wait_process(name=unknown.name).exit_code == 127)
failed, _ = processes.list_processes(parent=created.name, filter="state = STATE_FAILED")
check("processes are listed by state", sorted(p.name.split("/")[-1] for p in failed) == ["hello", "sleeper", "unknown"])
lingering = processes.create_process(
    parent=created.name,
    process=Process(command="sh", args=["-c", "sleep 300 & sleep 300"]),
    process_id="lingering",
    auto_run=True,
)
status, _ = refused(lambda: ProcessClient(other).get_process(name=sleeper.name))
check("another user cannot see the processes", status == 404)

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
deadline = time.monotonic() + 3
while state(processes.get_process(name=lingering.name)) == "STATE_RUNNING" and time.monotonic() < deadline:
    time.sleep(0.1)
check("a process still running at terminate has ended within seconds", state(processes.get_process(name=lingering.name)) == "STATE_FAILED")
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
