"""Drives the published h2o-engine-manager client, unmodified, against a gateway and an operator.

Usage: python lifecycle.py <aiem_url> <workspace>
An administrator sets up profiles, versions and an image; a user brings engines up and down
with the client's own wait(), which polls until the operator reports a final state: a DAI engine
(running, paused, running again, deleted), an H2O engine (running, terminated) and a notebook
engine (running, paused, resumed).
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
from h2o_engine_manager.clients.h2o_engine.client import H2OEngineClient
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
WAIT = 120


def check(step, condition):
    print(("ok   " if condition else "FAIL ") + step)
    if not condition:
        sys.exit(1)


def state(engine):
    return str(engine.state).split(".")[-1].replace("STATE_", "")


limits = dict(
    enabled=True,
    assigned_oidc_roles_enabled=False,
    cpu_constraint=ProfileConstraintNumeric(minimum="1", default="1", maximum="4"),
    gpu_constraint=ProfileConstraintNumeric(minimum="0", default="0"),
    memory_bytes_constraint=ProfileConstraintNumeric(minimum="1Gi", default="2Gi"),
    max_idle_duration_constraint=ProfileConstraintDuration(minimum="0s", default="1h"),
    max_running_duration_constraint=ProfileConstraintDuration(minimum="0s", default="4h"),
)
storage = ProfileConstraintNumeric(minimum="1Gi", default="1Gi", maximum="10Gi")
dai_profile = DAIEngineProfileClient(config).create_dai_engine_profile(
    parent=parent,
    dai_engine_profile=DAIEngineProfile(
        storage_bytes_constraint=storage, config_editability=ConfigEditability.CONFIG_EDITABILITY_FULL, **limits
    ),
    dai_engine_profile_id="dai",
)
dai_version = DAIEngineVersionClient(config).create_dai_engine_version(
    parent=parent, dai_engine_version=DAIEngineVersion(image="dai:1.10.6"), dai_engine_version_id="1.10.6"
)
h2o_profile = H2OEngineProfileClient(config).create_h2o_engine_profile(
    parent=parent,
    h2o_engine_profile=H2OEngineProfile(node_count_constraint=ProfileConstraintNumeric(minimum="1", default="1"), **limits),
    h2o_engine_profile_id="h2o",
)
h2o_version = H2OEngineVersionClient(config).create_h2o_engine_version(
    parent=parent, h2o_engine_version=H2OEngineVersion(image="h2o:3.46.0.1"), h2o_engine_version_id="3.46.0.1"
)
notebook_profile = NotebookEngineProfileClient(config).create_notebook_engine_profile(
    parent=parent,
    notebook_engine_profile=NotebookEngineProfile(storage_bytes_constraint=storage, **limits),
    notebook_engine_profile_id="notebook",
)
image = NotebookEngineImageClient(config).create_notebook_engine_image(
    parent=parent, notebook_engine_image=NotebookEngineImage(image="jupyter:1", enabled=True), notebook_engine_image_id="jupyter"
)

# DAI: up, paused, up again, gone — each step awaited with the client's wait().
dai = DAIEngineClient(connection_config=user, default_workspace_id=workspace)
engine = dai.create_engine(engine_id="e1", profile=dai_profile.name, dai_engine_version=dai_version.name)
engine.wait(timeout_seconds=WAIT)
check("DAI: wait() returns once the engine runs", state(engine) == "RUNNING" and not engine.reconciling)
check("DAI: a running engine has its URLs", engine.api_url.endswith(f"/{parent}/daiEngines/e1/") and engine.login_url != "")
engine.pause()
engine.wait(timeout_seconds=WAIT)
check("DAI: wait() returns once the engine is paused", state(engine) == "PAUSED")
engine.resume()
engine.wait(timeout_seconds=WAIT)
check("DAI: a resumed engine runs again", state(engine) == "RUNNING" and engine.resume_time is not None)
engine.delete()
engine.wait(timeout_seconds=WAIT)
check("DAI: wait() returns once a deleted engine is gone", dai.list_engines().total_size == 0)

# H2O: a two-node cluster up, then terminated for good.
h2o = H2OEngineClient(connection_config=user, default_workspace_id=workspace)
cluster = h2o.create_engine(engine_id="h1", node_count=2, profile=h2o_profile.name, h2o_engine_version=h2o_version.name)
cluster.wait(timeout_seconds=WAIT)
check("H2O: wait() returns once every node runs", state(cluster) == "RUNNING")
cluster.terminate()
cluster.wait(timeout_seconds=WAIT)
check("H2O: wait() returns once the cluster is terminated", state(cluster) == "TERMINATED")

# Notebook: wait() returns when the operator has caught up (reconciling false).
notebooks = NotebookEngineClient(connection_config=user)
notebook = notebooks.create_notebook_engine(
    parent=parent, notebook_engine=NotebookEngine(profile=notebook_profile.name, notebook_image=image.name), notebook_engine_id="n1"
)
notebook = notebooks.wait(name=notebook.name, timeout_seconds=WAIT)
check("notebook: wait() returns a running engine", state(notebook) == "RUNNING" and not notebook.reconciling)
notebooks.pause_notebook_engine(name=notebook.name)
notebook = notebooks.wait(name=notebook.name, timeout_seconds=WAIT)
check("notebook: paused", state(notebook) == "PAUSED")
notebooks.resume_notebook_engine(name=notebook.name)
notebook = notebooks.wait(name=notebook.name, timeout_seconds=WAIT)
check("notebook: running again", state(notebook) == "RUNNING")
print("all steps passed")
