# Create a Driverless AI engine: POST it to the workspace's daiEngines with its id.
workspace="$AIEM_URL/v1/workspaces/default"
auth="Authorization: Bearer $AIEM_TOKEN"

curl -sS --fail-with-body -X POST "$workspace/daiEngines?daiEngineId=churn-model" \
  -H "$auth" -H "Content-Type: application/json" \
  -d '{
    "displayName": "Churn model",
    "profile": "workspaces/global/daiEngineProfiles/standard",
    "daiEngineVersion": "workspaces/global/daiEngineVersions/latest",
    "cpu": 8,
    "memoryBytes": "34359738368",
    "maxIdleDuration": "7200s"
  }' | jq '.daiEngine | {name, state, cpu, memoryBytes, storageBytes}'

# Wait until it runs: read it every five seconds.
until curl -sS --fail-with-body "$workspace/daiEngines/churn-model" -H "$auth" |
  jq -e '.daiEngine.state == "STATE_RUNNING"' >/dev/null; do
  sleep 5
done
curl -sS --fail-with-body "$workspace/daiEngines/churn-model" -H "$auth" |
  jq '.daiEngine | {state, loginUrl}'
