#!/usr/bin/env bash
# The command the conformance suite's client mode runs: examples/mcp-client.rs
# (its path in $MCP_CLIENT) with OAuth on, given what the scenario passes in
# $MCP_CONFORMANCE_CONTEXT (JSON): the arguments to call named tools with, a
# pre-registered client's ID and secret (used for the client-credentials grant in the
# auth/client-credentials-* scenarios) or its private key and signing algorithm
# (private_key_jwt, passed as a file on descriptor 3), for cross-app access the
# identity provider and the user's ID token, and for workload identity federation the
# workload's JWT (`valid_jwt`; the context's expired and wrong-audience tokens are not
# for use).
set -euo pipefail
# The suite's servers, authorization servers included, listen on this machine.
args=(--oauth --allow-loopback --client-metadata-url https://conformance-test.local/client-metadata.json)
if [ -n "${MCP_CONFORMANCE_CONTEXT:-}" ]; then
  # One flag and its value per line, for the context's fields this client knows.
  while IFS= read -r line; do
    args+=("$line")
  done < <(python3 -c '
import json, os
context = json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"])
flags = (
    ("client_id", "--client-id"),
    ("client_secret", "--client-secret"),
    ("idp_id_token", "--id-token"),
    ("idp_issuer", "--idp-issuer"),
    ("idp_token_endpoint", "--idp-token-endpoint"),
    ("idp_client_id", "--idp-client-id"),
    ("signing_algorithm", "--signing-algorithm"),
    ("valid_jwt", "--workload-token"),
)
for key, flag in flags:
    if isinstance(context.get(key), str):
        print(flag)
        print(context[key])
# The arguments the scenario wants each named tool called with. JSON escapes line
# breaks, so each value stays on its line.
for call in context.get("toolCalls") or []:
    print("--arguments")
    print(call["name"] + "=" + json.dumps(call.get("arguments") or {}))
')
  # The PEM spans lines, so it reaches the client as a file rather than a flag value.
  pem=$(python3 -c '
import json, os
print(json.loads(os.environ["MCP_CONFORMANCE_CONTEXT"]).get("private_key_pem") or "")
')
  if [ -n "$pem" ]; then
    exec 3< <(printf '%s\n' "$pem")
    args+=(--signing-key-file /dev/fd/3)
  fi
fi
case "${MCP_CONFORMANCE_SCENARIO:-}" in
  auth/client-credentials-*) args+=(--client-credentials) ;;
  # The authorization and MCP servers want DPoP-bound tokens, with proofs.
  auth/dpop | auth/dpop-nonce) args+=(--dpop) ;;
  # The scenario reads back, through its echo tool, the schema the client holds.
  json-schema-2020-12-preservation)
    args+=(--echo-schema json_schema_echo=json_schema_2020_12_tool) ;;
esac
exec "$MCP_CLIENT" "${args[@]}" "$@"
