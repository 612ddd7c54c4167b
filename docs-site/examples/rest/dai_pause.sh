# Pause a running engine (its data volume stays), wait until it is paused, resume it.
engine="$AIEM_URL/v1/workspaces/default/daiEngines/churn-model"
auth="Authorization: Bearer $AIEM_TOKEN"

curl -sS --fail-with-body -X POST "$engine:pause" -H "$auth" |
  jq '.daiEngine | {state, reconciling}'
until curl -sS --fail-with-body "$engine" -H "$auth" |
  jq -e '.daiEngine.state == "STATE_PAUSED"' >/dev/null; do
  sleep 5
done

curl -sS --fail-with-body -X POST "$engine:resume" -H "$auth" |
  jq '.daiEngine | {state, reconciling}'
