"""Drives the published h2o-engine-manager client, unmodified, against a running gateway.

Usage: python notebook_engine_images.py <aiem_url> <workspace>
Exercises notebook engine images: create, get, list (all pages), update with a mask, delete.
Prints one line per step and exits non-zero on the first mismatch.
"""
import sys

from compat_login import connection
from h2o_engine_manager.clients.exception import CustomApiException
from h2o_engine_manager.clients.notebook_engine_image.client import NotebookEngineImageClient
from h2o_engine_manager.clients.notebook_engine_image.image import NotebookEngineImage

url = sys.argv[1]
client = NotebookEngineImageClient(connection(url, "admin"))
parent = f"workspaces/{sys.argv[2]}"


def check(step, condition):
    print(("ok   " if condition else "FAIL ") + step)
    if not condition:
        sys.exit(1)


created = client.create_notebook_engine_image(
    parent=parent,
    notebook_engine_image=NotebookEngineImage(image="registry.example.com/jupyter:1", display_name="Jupyter"),
    notebook_engine_image_id="jupyter",
)
check("create returns the image with its name", created.name == f"{parent}/notebookEngineImages/jupyter")
check("create keeps display name and image", created.display_name == "Jupyter" and created.image == "registry.example.com/jupyter:1")
check("create time is set", created.create_time is not None)

got = client.get_notebook_engine_image(name=created.name)
check("get returns the same image", got.name == created.name and got.enabled is True)

for i in range(3):
    client.create_notebook_engine_image(
        parent=parent,
        notebook_engine_image=NotebookEngineImage(image=f"img:{i}"),
        notebook_engine_image_id=f"extra-{i}",
    )
everything = client.list_all_notebook_engine_images(parent=parent)
check("list_all pages through every image", sorted(i.name.split("/")[-1] for i in everything) == ["extra-0", "extra-1", "extra-2", "jupyter"])
first = client.list_notebook_engine_images(parent=parent, page_size=2)
check("a page holds page_size items and a next token", len(first.notebook_engine_images) == 2 and first.next_page_token != "")

got.display_name = "Jupyter 2"
got.enabled = False
updated = client.update_notebook_engine_image(notebook_engine_image=got, update_mask="display_name,enabled")
check("update applies the masked fields", updated.display_name == "Jupyter 2" and updated.enabled is False)
check("update time is set", updated.update_time is not None)

client.delete_notebook_engine_image(name=created.name)
try:
    client.get_notebook_engine_image(name=created.name)
    check("get after delete is 404", False)
except CustomApiException as e:
    check("get after delete is 404", "404" in str(e))
print("all steps passed")
