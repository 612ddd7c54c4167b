"""Drives the published h2o-engine-manager client, unmodified, against a running gateway.

Usage: python engines.py <aiem_url> <workspace>
Logs in as an administrator and as a user (see compat_login.py). The administrator sets up
profiles, versions and an image in the workspace; the user exercises engines through the
client's own classes: a DAI engine (profile defaults, filtered and ordered list, masked update,
pause, resume, resize, delete), an H2O engine (create, size recommendation, terminate) and a
notebook engine (create with an image, access). The steps check what the API answers at once,
without waiting for the operator (lifecycle.py waits).
Prints one line per step and exits non-zero on the first mismatch.
"""
import sys

from compat_login import connection
from h2o_engine_manager.clients.constraint.profile_constraint_duration import ProfileConstraintDuration
from h2o_engine_manager.clients.constraint.profile_constraint_numeric import ProfileConstraintNumeric
from h2o_engine_manager.clients.dai_engine.dai_engine_client import DAIEngineClient
from h2o_engine_manager.clients.dai_engine_profile.client import DAIEngineProfileClient
from h2o_engine_manager.clients.dai_engine_profile.config_editability import ConfigEditability
from h2o_engine_manager.clients.dai_engine_profile.dai_engine_profile import DAIEngineProfile
from h2o_engine_manager.clients.dai_engine_version.client import DAIEngineVersionClient
from h2o_engine_manager.clients.dai_engine_version.version import DAIEngineVersion
from h2o_engine_manager.clients.exception import CustomApiException
from h2o_engine_manager.clients.h2o_engine.client import H2OEngineClient
from h2o_engine_manager.clients.h2o_engine.size import H2OEngineSizeLimits
from h2o_engine_manager.clients.h2o_engine_profile.client import H2OEngineProfileClient
from h2o_engine_manager.clients.h2o_engine_profile.h2o_engine_profile import H2OEngineProfile
from h2o_engine_manager.clients.h2o_engine_version.client import H2OEngineVersionClient
from h2o_engine_manager.clients.h2o_engine_version.version import H2OEngineVersion
from h2o_engine_manager.clients.notebook_engine.client import NotebookEngineClient
from h2o_engine_manager.clients.notebook_engine.engine import NotebookEngine
from h2o_engine_manager.clients.notebook_engine_image.client import NotebookEngineImageClient
from h2o_engine_manager.clients.notebook_engine_image.image import NotebookEngineImage
from h2o_engine_manager.clients.notebook_engine_profile.client import NotebookEngineProfileClient
from h2o_engine_manager.clients.notebook_engine_profile.profile import NotebookEngineProfile

config = connection(sys.argv[1], "admin")
user = connection(sys.argv[1], "user")
workspace = sys.argv[2]
parent = f"workspaces/{workspace}"


def check(step, condition):
    print(("ok   " if condition else "FAIL ") + step)
    if not condition:
        sys.exit(1)


def constraints():
    return dict(
        cpu_constraint=ProfileConstraintNumeric(minimum="1", default="2", maximum="8"),
        gpu_constraint=ProfileConstraintNumeric(minimum="0", default="0"),
        memory_bytes_constraint=ProfileConstraintNumeric(minimum="1Gi", default="4Gi", maximum="64Gi"),
        max_idle_duration_constraint=ProfileConstraintDuration(minimum="0s", default="1h"),
        max_running_duration_constraint=ProfileConstraintDuration(minimum="0s", default="4h"),
    )


storage = ProfileConstraintNumeric(minimum="1Gi", default="10Gi", maximum="100Gi")
common = dict(enabled=True, assigned_oidc_roles_enabled=False)

# What an administrator sets up first.
dai_profile = DAIEngineProfileClient(config).create_dai_engine_profile(
    parent=parent,
    dai_engine_profile=DAIEngineProfile(
        storage_bytes_constraint=storage, config_editability=ConfigEditability.CONFIG_EDITABILITY_FULL, **common, **constraints()
    ),
    dai_engine_profile_id="dai",
)
dai_version = DAIEngineVersionClient(config).create_dai_engine_version(
    parent=parent, dai_engine_version=DAIEngineVersion(image="dai:1.10.6", aliases=["latest"]), dai_engine_version_id="1.10.6"
)
h2o_profile = H2OEngineProfileClient(config).create_h2o_engine_profile(
    parent=parent,
    h2o_engine_profile=H2OEngineProfile(
        node_count_constraint=ProfileConstraintNumeric(minimum="1", default="1", maximum="4"), **common, **constraints()
    ),
    h2o_engine_profile_id="h2o",
)
h2o_version = H2OEngineVersionClient(config).create_h2o_engine_version(
    parent=parent, h2o_engine_version=H2OEngineVersion(image="h2o:3.46.0.1"), h2o_engine_version_id="3.46.0.1"
)
notebook_profile = NotebookEngineProfileClient(config).create_notebook_engine_profile(
    parent=parent,
    notebook_engine_profile=NotebookEngineProfile(storage_bytes_constraint=storage, **common, **constraints()),
    notebook_engine_profile_id="notebook",
)
image = NotebookEngineImageClient(config).create_notebook_engine_image(
    parent=parent, notebook_engine_image=NotebookEngineImage(image="jupyter:1"), notebook_engine_image_id="jupyter"
)

try:
    DAIEngineProfileClient(user).create_dai_engine_profile(
        parent=parent, dai_engine_profile=dai_profile, dai_engine_profile_id="mine"
    )
    check("a user may not define profiles", False)
except CustomApiException as e:
    check("a user may not define profiles", "403" in str(e))

# A DAI engine with the profile's defaults, created by the user.
dai = DAIEngineClient(connection_config=user, default_workspace_id=workspace)
engine = dai.create_engine(engine_id="e1", profile=dai_profile.name, dai_engine_version=f"{parent}/daiEngineVersions/latest")
check("DAI: create takes the profile's defaults", engine.cpu == 2 and engine.memory_bytes == "4Gi" and engine.storage_bytes == "10Gi")
check("DAI: the alias resolves to the version", engine.dai_engine_version == dai_version.name)
check("DAI: a new engine is starting", str(engine.state).endswith("STARTING"))
check("DAI: the creator is the signed-in user", engine.creator == "users/user" and engine.creator_display_name == "Una User")
dai.create_engine(engine_id="e2", profile=dai_profile.name, dai_engine_version=dai_version.name, cpu=4, display_name="big")
page = dai.list_engines(filter="cpu > 2", order_by="cpu desc")
check("DAI: list with a filter", [e.name.split("/")[-1] for e in page.engines] == ["e2"] and page.total_size == 1)
ordered = dai.list_engines(order_by="cpu desc, name")
check("DAI: list with an order", [e.cpu for e in ordered.engines] == [4, 2])
engine.display_name = "Renamed"
engine.cpu = 3
engine.update(update_mask="display_name")
check("DAI: update applies only the mask", engine.display_name == "Renamed" and dai.get_engine("e1").cpu == 2)
engine.pause()
engine.resume()
check("DAI: pause then resume is accepted", dai.get_engine("e1").name == engine.name)
engine.resize_storage(new_storage="20Gi")
check("DAI: resize grows the storage", dai.get_engine("e1").storage_bytes == "20Gi")
try:
    engine.resize_storage(new_storage="5Gi")
    check("DAI: shrinking storage is refused", False)
except CustomApiException as e:
    check("DAI: shrinking storage is refused", "400" in str(e))
engine.delete()
dai.get_engine("e2").delete()
left = dai.list_engines().engines
check("DAI: deleted engines are deleting or gone", all(str(e.state).endswith("DELETING") for e in left))

# An H2O engine, a size recommendation, and terminate.
h2o = H2OEngineClient(connection_config=user, default_workspace_id=workspace)
cluster = h2o.create_engine(engine_id="h1", node_count=2, profile=h2o_profile.name, h2o_engine_version=h2o_version.name)
check("H2O: create keeps the node count and fills the rest", cluster.node_count == 2 and cluster.cpu == 2)
size = h2o.calculate_h2o_engine_size_raw_dataset(
    dataset_size_bytes="100Gi",
    limits=H2OEngineSizeLimits(memory_bytes_per_node_min="1Gi", node_count_min=1, memory_bytes_per_node_max="64Gi", node_count_max=10),
)
check("H2O: size recommendation", size.node_count == 7 and size.memory_bytes == "58Gi")
cluster.terminate()
check("H2O: terminate is accepted", h2o.get_engine("h1").name == cluster.name)

# A notebook engine from an image, and its address.
notebooks = NotebookEngineClient(connection_config=user)
notebook = notebooks.create_notebook_engine(
    parent=parent, notebook_engine=NotebookEngine(profile=notebook_profile.name, notebook_image=image.name), notebook_engine_id="n1"
)
check("notebook: create snapshots the image", notebook.notebook_image_info.image == "jupyter:1")
uri = notebooks.access_notebook_engine(name=notebook.name)
check("notebook: access gives the engine's address", str(uri).rstrip("/").endswith(f"{parent}/notebookEngines/n1"))
print("all steps passed")
