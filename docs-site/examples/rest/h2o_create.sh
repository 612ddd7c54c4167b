# Create an H2O engine of two nodes: POST it to the workspace's h2oEngines with its id.
workspace="$AIEM_URL/v1/workspaces/default"
auth="Authorization: Bearer $AIEM_TOKEN"

curl -sS --fail-with-body -X POST "$workspace/h2oEngines?h2oEngineId=credit-risk" \
  -H "$auth" -H "Content-Type: application/json" \
  -d '{
    "displayName": "Credit risk",
    "profile": "workspaces/global/h2oEngineProfiles/standard",
    "h2oEngineVersion": "workspaces/global/h2oEngineVersions/latest",
    "nodeCount": "2",
    "cpu": 4,
    "memoryBytes": "17179869184"
  }' | jq '.h2oEngine | {name, state, nodeCount, cpu, memoryBytes}'

# Wait until the cluster has formed: read it every five seconds.
until curl -sS --fail-with-body "$workspace/h2oEngines/credit-risk" -H "$auth" |
  jq -e '.h2oEngine.state == "STATE_RUNNING"' >/dev/null; do
  sleep 5
done
curl -sS --fail-with-body "$workspace/h2oEngines/credit-risk" -H "$auth" |
  jq '.h2oEngine | {state, loginUrl}'
