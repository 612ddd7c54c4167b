"""Run a Python script in a sandbox engine and follow its output as it is printed."""

import os
import threading

import h2o_engine_manager
from h2o_engine_manager.clients.sandbox.process.ps import Process

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)
files = clients.sandbox_clients.filesystem_client
processes = clients.sandbox_clients.process_client
sandbox = "workspaces/default/sandboxEngines/scratchpad"

# Put the script into the sandbox's workspace.
script = b"""import sys, time
for step in range(1, 4):
    print(f"step {step} of 3", flush=True)
    time.sleep(0.3)
print("almost out of patience", file=sys.stderr, flush=True)
time.sleep(0.3)
sys.exit(2)
"""
files.write_file(
    name=sandbox,
    path="/workspace/jobs/count.py",
    content=script,
    create_parent_directories=True,
)

# Created without auto_run, the process waits, so that no output is missed.
process = processes.create_process(
    parent=sandbox,
    process=Process(
        command="python3",
        args=["count.py"],
        working_directory="/workspace/jobs",
    ),
    process_id="count",
)
print(f"{process.name}: {process.state.value}")


def follow():
    # Chunks are what the pipes gave: gather each stream's bytes into whole lines.
    # The stream ends when the process has ended and all its output was sent.
    pending = {}
    for chunk in processes.stream_output(name=process.name):
        stream = chunk.stream.value.removeprefix("OUTPUT_STREAM_").lower()
        *lines, pending[stream] = (pending.get(stream, b"") + chunk.data).split(b"\n")
        for line in lines:
            print(f"  {stream}: {line.decode()}")


follower = threading.Thread(target=follow)
follower.start()
processes.start_process(name=process.name)
follower.join()

# A non-zero exit code fails the process.
process = processes.get_process(name=process.name)
print(f"{process.state.value}, exit code {process.exit_code}")

# The output stays readable after the end: both streams, or one of them.
print(processes.read_output(name=process.name).decode(), end="")
stderr = processes.read_output(name=process.name, output_stream="OUTPUT_STREAM_STDERR")
print("stderr:", stderr.decode(), end="")

# auto_run starts at once; a signal (15 is SIGTERM) ends a process that runs too long.
sleeper = processes.create_process(
    parent=sandbox,
    process=Process(command="sleep", args=["600"]),
    process_id="sleeper",
    auto_run=True,
)
print(f"sleeper: {sleeper.state.value}")
processes.send_signal(name=sleeper.name, signal=15)
# wait_process() returns once the process has ended.
sleeper = processes.wait_process(name=sleeper.name)
print(f"sleeper: {sleeper.state.value}, exit code {sleeper.exit_code}")
