"""Administrators: offer sandbox engines.

Creates a sandbox engine image (the container users' code runs in) and a sandbox engine
template (its size, environment and time limits), in workspaces/global.
"""

import os

import h2o_engine_manager
from h2o_engine_manager.clients.sandbox_engine_image.image import SandboxEngineImage
from h2o_engine_manager.clients.sandbox_engine_template.template import (
    SandboxEngineTemplate,
)

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)

# The image: any container image with a POSIX shell and the tools your users need.
image = clients.sandbox_engine_image_client.create_sandbox_engine_image(
    parent="workspaces/global",
    sandbox_engine_image=SandboxEngineImage(
        image="python:3.12-slim",
        display_name="Python 3.12",
    ),
    sandbox_engine_image_id="python",
)
print(f"{image.name}: {image.image}, enabled {image.enabled}")

# The template: half a core and 2 GiB, stopped after an idle hour or eight hours in all.
template = clients.sandbox_engine_template_client.create_sandbox_engine_template(
    parent="workspaces/global",
    sandbox_engine_template=SandboxEngineTemplate(
        display_name="Small",
        milli_cpu_limit=500,
        memory_bytes_limit="2Gi",
        max_idle_duration="1h",
        max_running_duration="8h",
        environmental_variables={"PIP_NO_CACHE_DIR": "1"},
    ),
    sandbox_engine_template_id="small",
)
print(f"{template.name}: {template.display_name}")
# Unset requests take the limits: this template reserves what it allows.
print(f"  cpu {template.milli_cpu_request}m of {template.milli_cpu_limit}m")
print(f"  memory {template.memory_bytes_request} of {template.memory_bytes_limit}")
print(f"  idle {template.max_idle_duration}, running {template.max_running_duration}")
