"""Open a running H2O engine with the H2O-3 package: upload a CSV file and train a model."""

import csv
import os
import random
import tempfile
from urllib.parse import urlparse

import h2o
import h2o_authn
import h2o_engine_manager
import requests
from h2o.estimators import H2OGradientBoostingEstimator

login = dict(
    refresh_token=os.environ["AIEM_REFRESH_TOKEN"],
    issuer_url=os.environ["AIEM_ISSUER_URL"],
    client_id=os.environ["AIEM_CLIENT_ID"],
)
clients = h2o_engine_manager.login_custom(
    endpoint=os.environ["AIEM_URL"], default_workspace_id="default", **login
)
engine = clients.h2o_engine_client.get_engine(engine_id="credit-risk")
engine.wait(timeout_seconds=600)
print(f"{engine.name} is {engine.state.value}")

# The engine's address takes the same access tokens as the API: send one with every request.
tokens = h2o_authn.TokenProvider(**login)


class Bearer(requests.auth.AuthBase):
    def __call__(self, request):
        request.headers["Authorization"] = f"Bearer {tokens()}"
        return request


address = urlparse(engine.api_url)
config = engine.get_connection_config(
    https=address.scheme == "https", port=address.port or 443
)
config.update(auth=Bearer(), verbose=False)
h2o.connect(config=config)
h2o.no_progress()
print(f"Connected to H2O {h2o.cluster().version}: {h2o.cluster().cloud_size} nodes")

# A small CSV file of loan applications, uploaded through the engine's address.
rng = random.Random(7)
with tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False) as file:
    rows = csv.writer(file)
    rows.writerow(["income", "debt", "defaulted"])
    for _ in range(500):
        income, debt = rng.uniform(20, 200), rng.uniform(0, 100)
        rows.writerow([round(income, 1), round(debt, 1), "yes" if debt > income / 2 else "no"])
loans = h2o.upload_file(file.name)
print(f"Uploaded {loans.nrows} rows of {loans.ncols} columns")

gbm = H2OGradientBoostingEstimator(ntrees=20, max_depth=3, seed=1)
gbm.train(x=["income", "debt"], y="defaulted", training_frame=loans)
trees = int(gbm.summary()["number_of_trees"][0])
print(f"A GBM of {trees} trees, AUC above 0.95: {gbm.auc() > 0.95}")

# End the H2O session: its frames and models stay in the engine until it terminates.
h2o.connection().close()
