"""Prints what the published client reads of the installation's Driverless AI license.

Usage: python dai_license.py <aiem_url>
Prints `none` when no license is configured, else the metadata as JSON (dates as ISO text).
"""
import dataclasses
import json
import sys

from compat_login import connection
from h2o_engine_manager.clients.dai_license.client import DAILicenseClient

metadata = DAILicenseClient(connection(sys.argv[1], "user")).get_dai_license_metadata()
print("none" if metadata is None else json.dumps(dataclasses.asdict(metadata), default=str, sort_keys=True))
