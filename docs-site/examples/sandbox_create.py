"""Create a sandbox engine from an image and a template, and wait until it runs."""

import os

import h2o_engine_manager
from h2o_engine_manager.clients.sandbox_engine.engine import SandboxEngine

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)
sandboxes = clients.sandbox_engine_client

# Pick an enabled image and template from the administrator's catalogues.
images = clients.sandbox_engine_image_client.list_all_sandbox_engine_images(
    parent="workspaces/global"
)
image = next(image for image in images if image.enabled)
templates = clients.sandbox_engine_template_client.list_all_sandbox_engine_templates(
    parent="workspaces/global"
)
template = next(template for template in templates if template.enabled)
print(f"image {image.display_name}, template {template.display_name}")

engine = sandboxes.create_sandbox_engine(
    parent="workspaces/default",
    sandbox_engine=SandboxEngine(
        sandbox_engine_image=image.name,
        sandbox_engine_template=template.name,
        display_name="Scratchpad",
    ),
    sandbox_engine_id="scratchpad",
)
print(f"{engine.name}: {engine.state.value}")
# The engine keeps a copy of its template: later edits of the template do not change it.
info = engine.sandbox_engine_template_info
print(f"  cpu {info.milli_cpu_limit}m, memory {info.memory_bytes_limit}")
print(f"  stops after {info.max_idle_duration} idle or {info.max_running_duration} in all")

# wait() returns once the engine runs (or has failed, or was terminated).
engine = sandboxes.wait(name=engine.name, timeout_seconds=600)
print(f"{engine.display_name} is {engine.state.value}")
