"""Create a notebook engine from a profile and an image, and open it."""

import os

import h2o_engine_manager
from h2o_engine_manager.clients.notebook_engine.engine import NotebookEngine

clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"],
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)
notebooks = clients.notebook_engine_client

# Pick an enabled image and a profile assigned to you.
images = clients.notebook_engine_image_client.list_all_notebook_engine_images(
    parent="workspaces/global"
)
image = next(image for image in images if image.enabled)
profile = (
    clients.notebook_engine_profile_client.list_all_assigned_notebook_engine_profiles(
        parent="workspaces/global"
    )[0]
)
print(f"image {image.display_name}, profile {profile.display_name}")

# Unset sizes come from the profile's defaults.
engine = notebooks.create_notebook_engine(
    parent="workspaces/default",
    notebook_engine_id="exploration",
    notebook_engine=NotebookEngine(
        profile=profile.name,
        notebook_image=image.name,
        display_name="Exploration",
        memory_bytes="8Gi",
    ),
)
print(f"{engine.name}: {engine.state.value}")
print(
    f"  cpu {engine.cpu}, memory {engine.memory_bytes}, storage {engine.storage_bytes}"
)
print(f"  image {engine.notebook_image_info.image}")

# wait() returns once the engine has reached the state it was asked for.
engine = notebooks.wait(name=engine.name, timeout_seconds=600)
print(f"{engine.display_name} is {engine.state.value}")

# The address to open in a browser.
print("open", notebooks.access_notebook_engine(name=engine.name))
