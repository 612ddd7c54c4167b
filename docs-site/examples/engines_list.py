"""List engines of every kind in one call."""

import os

from h2o_engine_manager.clients.engine.client import EngineClient

engines = EngineClient(
    url=os.environ["AIEM_URL"],
    platform_token=os.environ["AIEM_REFRESH_TOKEN"],
    platform_oidc_url=os.environ["AIEM_ISSUER_URL"],
    platform_oidc_client_id=os.environ["AIEM_CLIENT_ID"],
)

# DAI, H2O and notebook engines of one workspace (newest first unless ordered
# otherwise).
for engine in engines.list_all_engines(workspace_id="default", order_by="name"):
    print(
        f"{engine.engine_type.value:18} {engine.version:9} {engine.state.value:14} {engine.name}"
    )

# Filter on the type and the version, compared as versions are (1.11.1 < 1.11.2 < 1.12).
page = engines.list_engines(
    workspace_id="default",
    filter_expr='type = TYPE_DRIVERLESS_AI AND version < "1.11.2"',
    order_by="display_name",
)
print(
    f"{page.total_size} DAI engines older than 1.11.2:",
    [engine.display_name for engine in page.engines],
)

# "*" at the start or end of a string matches any text.
named = engines.list_all_engines(
    workspace_id="default", filter_expr='display_name = "C*"', order_by="display_name"
)
print("named C...:", [engine.display_name for engine in named])
