"""Read and write files in a sandbox engine: write, list, stat, move, read, remove."""

import json
import os

import h2o_engine_manager
from h2o_engine_manager.clients.exception import CustomApiException

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)
files = clients.sandbox_clients.filesystem_client
sandbox = "workspaces/default/sandboxEngines/scratchpad"

# Paths are absolute within the sandbox; /workspace, /home/sandbox and /tmp are writable.
written = files.write_file(
    name=sandbox,
    path="/workspace/data/prices.csv",
    content=b"item,price\napple,3\npear,4\n",
    create_parent_directories=True,
)
print(f"wrote {written.file_info.path}, {written.file_info.size} bytes")

files.make_directory(name=sandbox, path="/workspace/archive")
for entry in files.list_directory(name=sandbox, path="/workspace"):
    print(f"  {entry.type.value:<20} {entry.path}")

# Move renames; with create_parent_directories it makes the missing folders too.
moved = files.move(
    name=sandbox,
    source_path="/workspace/data/prices.csv",
    destination_path="/workspace/archive/2026/prices.csv",
    create_parent_directories=True,
)
info = files.stat_file(name=sandbox, path=moved.path)
print(f"moved to {info.path}: {info.type.value}, {info.size} bytes, mode {info.mode}")

content = files.read_file(name=sandbox, path=moved.path).content
print(content.decode(), end="")

# overwrite=False creates only: an existing file is left alone.
try:
    files.write_file(name=sandbox, path=moved.path, content=b"", overwrite=False)
except CustomApiException as e:
    print(f"{e.status}: {json.loads(e.body)['message']}")

# A folder with content goes only with recursive=True.
files.remove(name=sandbox, path="/workspace/archive", recursive=True)
try:
    files.stat_file(name=sandbox, path="/workspace/archive")
except CustomApiException as e:
    print(f"{e.status}: {json.loads(e.body)['message']}")
