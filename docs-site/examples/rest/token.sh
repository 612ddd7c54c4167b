# An access token for curl, from the same four settings the Python examples read: the
# identity provider's token endpoint exchanges your refresh token for it. Access tokens
# expire within minutes; run this again when calls answer 401.
discovery="$AIEM_ISSUER_URL/.well-known/openid-configuration"
token_endpoint=$(curl -sS --fail-with-body "$discovery" | jq -r .token_endpoint)
AIEM_TOKEN=$(curl -sS --fail-with-body "$token_endpoint" \
  -d grant_type=refresh_token -d "client_id=$AIEM_CLIENT_ID" \
  -d "refresh_token=$AIEM_REFRESH_TOKEN" |
  jq -r .access_token)
export AIEM_TOKEN
