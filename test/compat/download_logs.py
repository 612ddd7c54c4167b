"""Downloads engine logs with the published h2o-engine-manager client, unmodified.

Usage: python download_logs.py <aiem_url> <workspace> <dai engine id> <h2o engine id>
The gateway under test accepts any bearer token (its development identity), so a fixed token
stands in for a login. Prints each engine's logs after a line naming the engine.
"""
import sys

from h2o_engine_manager.clients.connection_config import ConnectionConfig
from h2o_engine_manager.clients.dai_engine.dai_engine_client import DAIEngineClient
from h2o_engine_manager.clients.h2o_engine.client import H2OEngineClient

url, workspace, dai_id, h2o_id = sys.argv[1:5]
config = ConnectionConfig(aiem_url=url, token_provider=lambda: "development")
dai = DAIEngineClient(connection_config=config, default_workspace_id=workspace)
h2o = H2OEngineClient(connection_config=config, default_workspace_id=workspace)
for engine in [dai.get_engine(engine_id=dai_id), h2o.get_engine(engine_id=h2o_id)]:
    print(f"##### {engine.name}")
    print(engine.download_logs(), end="")
