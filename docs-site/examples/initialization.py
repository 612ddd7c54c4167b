"""Build individual clients from a connection configuration.

Useful when a program needs only one or two clients, or supplies access tokens its own
way.
"""

import os

from h2o_authn import TokenProvider

from h2o_engine_manager.clients.connection_config import ConnectionConfig
from h2o_engine_manager.clients.dai_engine.dai_engine_client import DAIEngineClient
from h2o_engine_manager.clients.notebook_engine.client import NotebookEngineClient

# A token provider returns a valid access token each time it is called, refreshing it
# when needed.
token_provider = TokenProvider(
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
)
config = ConnectionConfig(
    aiem_url=os.environ["AIEM_URL"], token_provider=token_provider
)

# DAI and H2O engine clients work in a default workspace; the others take full
# resource names.
dai_engines = DAIEngineClient(connection_config=config, default_workspace_id="team-a")
notebooks = NotebookEngineClient(connection_config=config)

print("DAI engines in team-a:", dai_engines.list_engines().total_size)
print(
    "notebook engines in team-b:",
    len(notebooks.list_all_notebook_engines(parent="workspaces/team-b")),
)

# Switch the DAI client to another workspace for the calls that follow.
dai_engines.set_default_workspace_id("team-b")
print("DAI engines in team-b:", dai_engines.list_engines().total_size)
