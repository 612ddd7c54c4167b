"""Drives the published h2o-engine-manager client, unmodified, against a sandbox that runs for real.

Usage: python real_sandbox.py <aiem_url> <workspace>
A user creates a sandbox engine from the real-node catalogue (image and template "real" in the
workspace "global"): processes run in its container through the kubelet's exec, with streamed
output; a 1 MiB file goes in and comes back; the read-only root refuses a write; terminate ends it.
Prints one line per step and exits non-zero on the first mismatch.
"""
import json
import os
import sys

from compat_login import connection
from compat_steps import check, refused, state
from h2o_engine_manager.clients.sandbox.filesystem.client import FilesystemClient
from h2o_engine_manager.clients.sandbox.process.client import ProcessClient
from h2o_engine_manager.clients.sandbox.process.ps import Process
from h2o_engine_manager.clients.sandbox_engine.client import SandboxEngineClient
from h2o_engine_manager.clients.sandbox_engine.engine import SandboxEngine

user = connection(sys.argv[1], "user")
parent = f"workspaces/{sys.argv[2]}"
WAIT = 240

engines = SandboxEngineClient(user)
created = engines.create_sandbox_engine(
    parent=parent,
    sandbox_engine=SandboxEngine(
        sandbox_engine_image="workspaces/global/sandboxEngineImages/real",
        sandbox_engine_template="workspaces/global/sandboxEngineTemplates/real",
    ),
    sandbox_engine_id="real",
)
running = engines.wait(name=created.name, timeout_seconds=WAIT)
check("the sandbox runs in a real container", running is not None and state(running) == "STATE_RUNNING")

processes = ProcessClient(user)
SCRIPT = "import os, sys, time\nprint('uid', os.getuid(), flush=True)\ntime.sleep(0.3)\nprint(sys.version_info[0], flush=True)"
python = processes.create_process(
    parent=created.name, process=Process(command="python3", args=["-c", SCRIPT]), process_id="python", auto_run=True
)
streamed = b"".join(chunk.data for chunk in processes.stream_output(name=python.name))
check(f"python3 -c runs as the sandbox user, its output streamed ({streamed!r})", streamed == b"uid 1000\n3\n")
check("and exits 0", processes.wait_process(name=python.name).exit_code == 0)

shell = processes.create_process(
    parent=created.name,
    process=Process(command="sh", args=["-c", "echo $HOME; exit 4"]),
    process_id="shell",
    auto_run=True,
)
ended = processes.wait_process(name=shell.name)
output = processes.read_output(name=shell.name, output_stream="OUTPUT_STREAM_STDOUT").decode().splitlines()
check(f"a shell process sees its home and exits with its own code ({output}, {ended.exit_code})", output[0] == "/home/sandbox" and ended.exit_code == 4)

files = FilesystemClient(user)
payload = os.urandom(1024 * 1024)
files.write_file(name=created.name, path="/workspace/data/blob.bin", content=payload, create_parent_directories=True)
check("1 MiB written and read back byte for byte", files.read_file(name=created.name, path="/workspace/data/blob.bin").content == payload)

status, body = refused(lambda: files.write_file(name=created.name, path="/etc/motd", content=b"x"))
check(f"a write outside the writable paths is refused as the read-only root's ({status} {json.dumps(body)})", 400 <= status < 500 and "read-only" in json.dumps(body).lower())
touch = processes.create_process(
    parent=created.name, process=Process(command="sh", args=["-c", "touch /usr/x"]), process_id="touch", auto_run=True
)
processes.wait_process(name=touch.name)
err = processes.read_output(name=touch.name, output_stream="OUTPUT_STREAM_STDERR").decode()
check(f"a process cannot write to the root either ({err.strip()})", "Read-only file system" in err)

engines.terminate_sandbox_engine(name=created.name)
ended = engines.wait(name=created.name, timeout_seconds=WAIT)
check("terminate ends the sandbox", ended is not None and state(ended) == "STATE_TERMINATED")
engines.delete_sandbox_engine(name=created.name)
print("all steps passed")
