# Create a notebook engine: POST it to the workspace's notebookEngines with its id.
workspace="$AIEM_URL/v1/workspaces/default"
auth="Authorization: Bearer $AIEM_TOKEN"

curl -sS --fail-with-body -X POST \
  "$workspace/notebookEngines?notebookEngineId=exploration" \
  -H "$auth" -H "Content-Type: application/json" \
  -d '{
    "displayName": "Exploration",
    "profile": "workspaces/global/notebookEngineProfiles/standard",
    "notebookImage": "workspaces/global/notebookEngineImages/python",
    "memoryBytes": "8589934592"
  }' | jq '.notebookEngine | {name, state, cpu, memoryBytes, storageBytes}'

# Wait until its notebook server answers: read it every five seconds.
until curl -sS --fail-with-body "$workspace/notebookEngines/exploration" -H "$auth" |
  jq -e '.notebookEngine.state == "STATE_RUNNING"' >/dev/null; do
  sleep 5
done
curl -sS --fail-with-body "$workspace/notebookEngines/exploration" -H "$auth" |
  jq '.notebookEngine | {state}'
