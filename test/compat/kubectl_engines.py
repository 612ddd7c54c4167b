"""An engine applied with kubectl, seen by its creator through the published client, unmodified.

Usage: python kubectl_engines.py <aiem_url> <workspace> <engine id>
Logs in as the user (see compat_login.py), finds the DAI engine in the workspace's list, reads it,
pauses and resumes it with the client's own calls, waiting for each state. Prints one line per
step and exits non-zero on the first mismatch.
"""
import sys

from compat_login import connection
from h2o_engine_manager.clients.dai_engine.dai_engine_client import DAIEngineClient
from h2o_engine_manager.clients.dai_engine.dai_engine_state import DAIEngineState

url, workspace, engine_id = sys.argv[1:4]
client = DAIEngineClient(connection(url, "user"), default_workspace_id=workspace)

listed = [engine.engine_id for engine in client.list_all_engines()]
assert engine_id in listed, listed
print("listed:", engine_id)

engine = client.get_engine(engine_id)
assert engine.state == DAIEngineState.STATE_RUNNING, engine.state
print("creator:", engine.creator, "state:", engine.state.name, "cpu:", engine.cpu)

engine.pause()
engine.wait()
assert engine.state == DAIEngineState.STATE_PAUSED, engine.state
print("paused:", engine.state.name)
engine.resume()
engine.wait()
assert engine.state == DAIEngineState.STATE_RUNNING, engine.state
print("resumed:", engine.state.name)
