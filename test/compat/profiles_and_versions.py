"""Drives the published h2o-engine-manager client, unmodified, against a running gateway.

Usage: python profiles_and_versions.py <aiem_url> <workspace>
Exercises one profile of each kind (create, get, list, list assigned, update, copy, delete) and
DAI and H2O versions (create, get, get by alias, list, update, alias reassignment, delete).
Prints one line per step and exits non-zero on the first mismatch.
"""
import sys

from compat_login import connection
from h2o_engine_manager.clients.constraint.profile_constraint_duration import ProfileConstraintDuration
from h2o_engine_manager.clients.constraint.profile_constraint_numeric import ProfileConstraintNumeric
from h2o_engine_manager.clients.dai_engine_profile.client import DAIEngineProfileClient
from h2o_engine_manager.clients.dai_engine_profile.config_editability import ConfigEditability
from h2o_engine_manager.clients.dai_engine_profile.dai_engine_profile import DAIEngineProfile
from h2o_engine_manager.clients.dai_engine_version.client import DAIEngineVersionClient
from h2o_engine_manager.clients.dai_engine_version.version import DAIEngineVersion
from h2o_engine_manager.clients.exception import CustomApiException
from h2o_engine_manager.clients.h2o_engine_profile.client import H2OEngineProfileClient
from h2o_engine_manager.clients.h2o_engine_profile.h2o_engine_profile import H2OEngineProfile
from h2o_engine_manager.clients.h2o_engine_version.client import H2OEngineVersionClient
from h2o_engine_manager.clients.h2o_engine_version.version import H2OEngineVersion
from h2o_engine_manager.clients.notebook_engine_profile.client import NotebookEngineProfileClient
from h2o_engine_manager.clients.notebook_engine_profile.profile import NotebookEngineProfile

config = connection(sys.argv[1], "admin")
parent = f"workspaces/{sys.argv[2]}"
copies = f"workspaces/{sys.argv[2]}-copies"


def check(step, condition):
    print(("ok   " if condition else "FAIL ") + step)
    if not condition:
        sys.exit(1)


def expect_404(step, call):
    try:
        call()
        check(step, False)
    except CustomApiException as e:
        check(step, "404" in str(e))


def constraints():
    return dict(
        cpu_constraint=ProfileConstraintNumeric(minimum="1", default="2", maximum="8"),
        gpu_constraint=ProfileConstraintNumeric(minimum="0", default="0"),
        memory_bytes_constraint=ProfileConstraintNumeric(
            minimum="1073741824", default="4294967296", cumulative_maximum="68719476736"
        ),
        max_idle_duration_constraint=ProfileConstraintDuration(minimum="0s", default="1h", maximum="1d"),
        max_running_duration_constraint=ProfileConstraintDuration(minimum="0s", default="4h"),
    )


storage = ProfileConstraintNumeric(minimum="1073741824", default="10737418240")
profiles = [
    (
        "DAI",
        DAIEngineProfileClient(config),
        "dai_engine_profile",
        DAIEngineProfile(
            storage_bytes_constraint=storage,
            config_editability=ConfigEditability.CONFIG_EDITABILITY_FULL,
            **constraints(),
        ),
    ),
    (
        "H2O",
        H2OEngineProfileClient(config),
        "h2o_engine_profile",
        H2OEngineProfile(node_count_constraint=ProfileConstraintNumeric(minimum="1", default="1"), **constraints()),
    ),
    (
        "notebook",
        NotebookEngineProfileClient(config),
        "notebook_engine_profile",
        NotebookEngineProfile(storage_bytes_constraint=storage, **constraints()),
    ),
]

for label, client, noun, profile in profiles:
    profile.display_name = f"{label} standard"
    profile.assigned_oidc_roles_enabled = False
    call = lambda verb, *args, **kwargs: getattr(client, verb.format(noun))(*args, **kwargs)  # noqa: E731
    created = call("create_{}", parent=parent, **{noun: profile, f"{noun}_id": "standard"})
    check(f"{label} profile: create returns its name", created.name.startswith(f"{parent}/") and created.name.endswith("/standard"))
    check(f"{label} profile: constraints round-trip", created.cpu_constraint.maximum == "8" and created.gpu_constraint.maximum is None)
    check(f"{label} profile: durations round-trip", created.max_idle_duration_constraint.default == "1h" and created.max_idle_duration_constraint.maximum == "1d")
    check(f"{label} profile: the server picks the GPU resource", created.gpu_resource_name == "nvidia.com/gpu")
    if label == "notebook":
        check("notebook profile: git defaults", created.git_ref == "HEAD" and created.git_directory_name == "Example")
    got = call("get_{}", name=created.name)
    check(f"{label} profile: get returns it", got.name == created.name and got.display_name == f"{label} standard")
    check(f"{label} profile: list_all has it", [p.name for p in call("list_all_{}s", parent=parent)] == [created.name])
    check(f"{label} profile: list_all_assigned has it", [p.name for p in call("list_all_assigned_{}s", parent=parent)] == [created.name])
    got.display_name = "Renamed"
    got.cpu_constraint = ProfileConstraintNumeric(minimum="2", default="4", maximum="16")
    updated = call("update_{}", got, update_mask="display_name,cpu_constraint")
    check(f"{label} profile: update applies the mask", updated.display_name == "Renamed" and updated.cpu_constraint.maximum == "16")
    check(f"{label} profile: update time is set", updated.update_time is not None)
    copied = call("copy_{}", name=created.name, parent=copies, **{f"{noun}_id": "copied"})
    check(f"{label} profile: copy lands in the target workspace", copied.name.startswith(f"{copies}/") and copied.display_name == "Renamed")
    call("delete_{}", name=created.name)
    call("delete_{}", name=copied.name)
    expect_404(f"{label} profile: get after delete is 404", lambda: call("get_{}", name=created.name))

versions = [
    ("DAI", DAIEngineVersionClient(config), "dai_engine_version", DAIEngineVersion),
    ("H2O", H2OEngineVersionClient(config), "h2o_engine_version", H2OEngineVersion),
]
for label, client, noun, Version in versions:
    call = lambda verb, *args, **kwargs: getattr(client, verb.format(noun))(*args, **kwargs)  # noqa: E731
    v1 = call("create_{}", parent=parent, **{noun: Version(image="engine:1.10.5", aliases=["latest", "bar"]), f"{noun}_id": "1.10.5"})
    v2 = call("create_{}", parent=parent, **{noun: Version(image="engine:1.10.6", aliases=["baz", "foo"]), f"{noun}_id": "1.10.6"})
    check(f"{label} version: create keeps aliases", v1.aliases == ["latest", "bar"] and v2.aliases == ["baz", "foo"])
    by_alias = call("get_{}", name=v1.name.replace("1.10.5", "latest"))
    check(f"{label} version: an alias resolves to its version", by_alias.name == v1.name)
    everything = call("assign_{}_aliases", name=v1.name, aliases=["latest", "baz"])
    aliases = {v.name.split("/")[-1]: v.aliases for v in everything}
    check(f"{label} version: assigning moves the alias and returns every version", aliases == {"1.10.6": ["foo"], "1.10.5": ["latest", "baz"]})
    listed = call("list_all_{}s", parent=parent)
    check(f"{label} version: list_all returns newest first", [v.name.split("/")[-1] for v in listed] == ["1.10.6", "1.10.5"])
    v2 = call("get_{}", name=v2.name)
    v2.deprecated = True
    updated = call("update_{}", v2, update_mask="deprecated")
    check(f"{label} version: update applies the mask", updated.deprecated is True and updated.aliases == ["foo"])
    call("delete_{}", name=v1.name)
    call("delete_{}", name=v2.name)
    expect_404(f"{label} version: get after delete is 404", lambda: call("get_{}", name=v1.name))

print("all steps passed")
