"""Logs in to the gateway as users do: the client's own login_custom, with an OIDC refresh token.

The test passes the identity provider in the environment: AIEM_ISSUER_URL, AIEM_CLIENT_ID, and a
refresh token per user, AIEM_<WHO>_REFRESH_TOKEN (ADMIN, USER).
"""
import os

from h2o_engine_manager import login_custom
from h2o_engine_manager.clients.connection_config import ConnectionConfig


def connection(aiem_url, who):
    """The connection of `who` after a full login: discovery, token refresh, and GET /version."""
    clients = login_custom(
        endpoint=aiem_url,
        refresh_token=os.environ[f"AIEM_{who.upper()}_REFRESH_TOKEN"],
        issuer_url=os.environ["AIEM_ISSUER_URL"],
        client_id=os.environ["AIEM_CLIENT_ID"],
    )
    info = clients.dai_engine_client.client_info
    return ConnectionConfig(aiem_url=info.url, token_provider=info.token_provider)
