#!/bin/sh
# The notebook engine: JupyterLab on port 8888 of every address, under the path NB_PREFIX (the
# path of the address the API's :access call hands out). The settings the operator and the
# access proxy rely on are flags, which no configuration file in the home volume can override.
#
# No token and no password: the access proxy in front authenticates every request. Jupyter's
# XSRF check stays on, so what the proxy forwards must keep it working:
#   - the `_xsrf` cookie Jupyter sets on its pages (NB_PREFIX/lab, not the /api answers) and
#     the `X-XSRFToken` header JupyterLab sends back with it on POST, PUT, PATCH and DELETE
#     (without them a write is 403);
#   - the Host header of the request: Jupyter compares it with the Origin header of API calls
#     and of the kernels' websockets (NB_PREFIX/api/kernels/<id>/channels), which the proxy
#     must pass through as websockets.
# A client other than JupyterLab (a script, a test) does the same: GET NB_PREFIX/lab, then send
# the `_xsrf` cookie's value as `X-XSRFToken` together with the cookie.
set -eu
exec /opt/jupyter/bin/jupyter lab \
  --ServerApp.ip=0.0.0.0 \
  --ServerApp.port=8888 \
  --ServerApp.base_url="${NB_PREFIX:-/}" \
  --ServerApp.root_dir=/home/jovyan \
  --ServerApp.allow_remote_access=True \
  --ServerApp.open_browser=False \
  --ServerApp.quit_button=False \
  --IdentityProvider.token= \
  --PasswordIdentityProvider.hashed_password= \
  "$@"
