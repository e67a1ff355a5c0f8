#!/usr/bin/env python3
"""The OpenAPI 3.1 description of `herald serve`: the one place the HTTP API is described.

This file is the source; `Sources/HeraldServer/Operations/OpenAPIDocument.swift` holds the one generated
copy, the JSON, committed and compiled in (the server serves it at `/openapi.json` and renders
`/openapi.yaml` from it).

    python3 scripts/openapi.py            # rewrites OpenAPIDocument.swift
    python3 scripts/openapi.py --check    # fails if it is stale, over MAX_LINES, or not
                                          # valid OpenAPI 3.1 (openapi-spec-validator)

Schemas, parameters, headers, request bodies and responses several places use, and the error
responses operations share (one per status and exact set of `error` codes), are written once under
`components` and referred to with `$ref`. Short arrays and objects are written on one line
(`to_json`). `scripts/conformance.py` holds a live server to it, and
`OpenAPIContractTests` the router and `ErrorCode`. Change a route, change this file.
Python 3.11, standard library only for writing; --check needs openapi-spec-validator and PyYAML.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SWIFT_PATH = ROOT / "Sources" / "HeraldServer" / "Operations" / "OpenAPIDocument.swift"
ERROR_CODES_PATH = ROOT / "Sources" / "HeraldWire" / "ErrorCode.swift"
ERROR_STATUSES_PATH = ROOT / "Sources" / "HeraldServer" / "Edge" / "ErrorCode+Status.swift"

JSON = "application/json"


STATUS_NUMBERS = {"badRequest": 400, "unauthorized": 401, "forbidden": 403, "notFound": 404, "requestTimeout": 408,
                  "conflict": 409, "gone": 410, "contentTooLarge": 413, "unprocessableContent": 422,
                  "tooManyRequests": 429, "internalServerError": 500, "gatewayTimeout": 504,
                  "serviceUnavailable": 503}


def read_error_codes() -> dict[str, int]:
    """Every code and its status, from the one list: the `ErrorCode` enum, in its order, and the server's statuses."""
    cases = re.findall(r"^    case (\w+)(?: = \"([a-z0-9_]+)\")?$", ERROR_CODES_PATH.read_text(), re.M)
    statuses = dict(re.findall(r"^        case \.(\w+): \.(\w+)$", ERROR_STATUSES_PATH.read_text(), re.M))
    assert cases and len(cases) == len(statuses), f"{ERROR_STATUSES_PATH.name}: one status line per code of {ERROR_CODES_PATH.name}"
    return {raw or name: STATUS_NUMBERS[statuses[name]] for name, raw in cases}


CODES = read_error_codes()


def ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def narrowed(base: str, codes: list[str]) -> dict:
    """The `base` error body (`Error` or `LnurlFailure`) with its `error` narrowed to `codes`."""
    return {"allOf": [ref(base)], "properties": {"error": {"enum": codes}}}


# Pieces several places use: each is written once, in `components/<section>`, and referred to.
SHARED: dict[str, dict[str, dict]] = {"schemas": {}, "parameters": {}, "headers": {}, "requestBodies": {},
                                      "responses": {}}


def shared(section: str, name: str, value: dict) -> dict:
    """`value` as `components/<section>/<name>`, and a reference to it."""
    assert SHARED[section].get(name, value) == value, f"{section}/{name} is two things"
    SHARED[section][name] = value
    return {"$ref": f"#/components/{section}/{name}"}


def obj(required: dict[str, dict], optional: dict[str, dict] | None = None, *, closed: bool = True,
        description: str | None = None) -> dict:
    """An object schema; `closed` refuses fields not listed (Herald's own bodies are exact)."""
    schema: dict = {"type": "object", "properties": {**required, **(optional or {})}}
    if required:
        schema["required"] = list(required)
    if closed:
        schema["additionalProperties"] = False
    if description:
        schema["description"] = description
    return schema


def string(description: str | None = None, **extra) -> dict:
    schema = {"type": "string", **extra}
    if description:
        schema["description"] = description
    return schema


def integer(description: str | None = None, **extra) -> dict:
    schema = {"type": "integer", **extra}
    if description:
        schema["description"] = description
    return schema


BOOL = {"type": "boolean"}
STRINGS = shared("schemas", "Strings", {"type": "array", "items": {"type": "string"}})
PLATFORM = shared("schemas", "Platform", {
    "type": "string", "enum": ["ios", "android", "webpush"],
    "description": "`ios` (APNs), `android` (FCM) or `webpush` (Web Push: UnifiedPush distributors, browsers); "
                   "read case-insensitively."})
JOB_ID_LIST = {"type": "array", "items": string(minLength=1)}
JOB_IDS = shared("schemas", "JobIds", {**JOB_ID_LIST, "description": "The outbox job ids."})
JOB_PLATFORM = {"type": "string", "enum": ["ios", "android", "webpush", "nostr", "webhook"],
                "description": "A device's platform, or `nostr`: a zap receipt's publication to a relay, or "
                               "`webhook`: an NWC request forwarded to another service's webhook."}
IDENTITIES = {"type": "array", "maxItems": 8, "items": shared("schemas", "Identity", string(
    "`ln:` and 66 lower-case hex digits of a compressed secp256k1 key, or `pk:` and 52 z-base-32 characters of an "
    "Ed25519 key.", pattern="^(ln:0[23][0-9a-f]{64}|pk:[ybndrfg8ejkmcpqxot1uwisza345h769]{52})$")),
              "description": "Identities the device proves it holds; each needs a proof in `proofs`. Pushes "
                             "addressed to an identity (a Breez payment webhook's `ln:<user_pubkey>`) reach it."}
PROOFS = shared("schemas", "IdentityProofs", {"type": "array", "maxItems": 8, "items": obj(
    {"identity": string(minLength=1),
     "sig": string("For `ln:` an LN signed message (zbase32); for `pk:` 128 hex digits of an Ed25519 "
                   "signature.", minLength=1)}),
          "description": "One signature per identity over the UTF-8 preimage `herald-identity-v1\\naudience:<host>\\nplatform:<platform>"
                         "\\npush_token:<push_token as sent, or the subscription's endpoint>\\nidentities:<sorted, "
                         "comma-joined>\\nts:<ts>`."})
PROOF_TS = integer("Unix seconds the proofs were signed at: within 600 s of the server's clock.")
IDENTITY_400 = ["invalid_identities", "invalid_identity", "missing_timestamp"]
LIVE_ACTIVITY_START = shared("schemas", "LiveActivityStart", obj({"push_to_start_token": string(
    "iOS only: the app's ActivityKit push-to-start token (`pushToStartTokenUpdates`, iOS 17.2+), hex; "
    "swaps' `swap.update` webhooks then start a Live Activity with it. Another platform is "
    "`400 invalid_request`.", minLength=1, maxLength=4096)}))
LSP_NODE_ID = {"type": "string", "pattern": "^0[23][0-9A-Fa-f]{64}$",
               "description": "The LSP's node id (33-byte compressed secp256k1 key, hex): every LSPS5 "
                              "notification must then be signed by it."}

# ---------------------------------------------------------------------------------------------
# Schemas

SCHEMAS: dict[str, dict] = {
    "Error": obj(
        {"error": ref("ErrorCode"), "message": string("For humans.")},
        description="Every error of Herald's own API: `{\"error\": \"<code>\", \"message\": \"…\"}`.",
    ),
    "ErrorCode": {"type": "string", "enum": list(CODES),
                  "description": "Every machine-readable code, each always with the same status; every "
                                 "response lists the ones it can carry."},
    "LnurlFailure": obj(
        {"status": {"const": "ERROR"}, "reason": string()},
        {"error": string("Herald's code when the failure is one of its API errors (rate limit, overload, store).")},
        description="A failure of the Lightning-address service, in the LNURL shape.",
    ),
    "LnurlError": obj(
        {"status": {"const": "ERROR"}, "reason": string()}, closed=False,
        description="An LNURL error the wallet answered itself; passed on as sent, with 200.",
    ),
    "JobAccepted": obj({"id": string("The outbox job id (a UUID).", minLength=1)}),
    "RelayedAnswer": {
        "type": "object",
        "description": "The device's answer on its reply URL, byte for byte (request/response events held "
                       "for the device: `invoice.request`, `lnurlpay_*` without a `reply_url`).",
    },
    "WebhookBody": {
        "type": "object",
        "description": "A Breez-shaped webhook: exactly one of `event` or `template`, and `data`. Known names "
                       "(`swap.update`, `invoice.request`, `lnurlpay_info`, `lnurlpay_invoice`, `lnurlpay_verify`, "
                       "`payment_received`, `tx_confirmed`, `address_txs_confirmed`, `nwc_event`) must carry their "
                       "fields (`422 invalid_data`); any other name passes through. Or, with the "
                       "`x-lsps5-timestamp` and `x-lsps5-signature` headers, an LSPS5 (bLIP-55) notification: a "
                       "JSON-RPC 2.0 notification (`jsonrpc`, `method`, `params`; no `id`) signed by the LSP's node key.",
        "properties": {
            "event": string(minLength=1, maxLength=128, examples=["swap.update"]),
            "template": string(minLength=1, maxLength=128),
            "data": {"type": "object", "description": "Passed to the device as `notification_payload`."},
            "jsonrpc": {"const": "2.0"},
            "method": string("LSPS5: `lsps5.webhook_registered`, `lsps5.payment_incoming`, "
                             "`lsps5.onion_message_incoming`, `lsps5.liquidity_management_request`, "
                             "`lsps5.expiry_soon`, or another method, passed through.",
                             pattern="^[A-Za-z0-9_.-]{1,48}$", examples=["lsps5.payment_incoming"]),
            "params": {"type": "object",
                       "description": "LSPS5: by name; `lsps5.expiry_soon` needs `timeout` (a block height)."},
        },
        "oneOf": [{"required": ["event"]}, {"required": ["template"]}, {"required": ["jsonrpc", "method"]}],
    },
    "WebPushSubscription": obj(
        {"endpoint": string("The push service's URL for this subscription: https, at most 1,000 bytes.",
                            minLength=1, maxLength=1000),
         "keys": obj({"p256dh": string("Base64url of the subscriber's uncompressed P-256 public key (65 bytes).",
                                       minLength=1),
                      "auth": string("Base64url of the 16-byte authentication secret.", minLength=1)},
                     closed=False)},
        {"expirationTime": {"type": ["number", "null"]}},
        closed=False,
        description="A Web Push subscription as `PushSubscription.toJSON()` and UnifiedPush connectors give it.",
    ),
    "DeviceRegistrationRequest": obj(
        {"platform": PLATFORM},
        {"push_token": string("The APNs device token or FCM registration token; required for `ios` and "
                              "`android`, absent for `webpush`.", minLength=1, maxLength=4096),
         "subscription": ref("WebPushSubscription"),
         "declarative": {"type": "boolean",
                         "description": "`webpush` only: true sends visible pushes in WebKit's declarative form "
                                        "(`web_push: 8030`); absent or false keeps the plain data map. Anything "
                                        "but true, false or null is `400 invalid_subscription`."},
         "seal_key": string("Base64 (or base64url) of the device's 32-byte X25519 public key: pushes are "
                            "sealed to it."),
         "app": string("The configured app whose credentials push to the device; absent: `default`.",
                       minLength=1),
         "lsp_node_id": LSP_NODE_ID,
         "live_activity": LIVE_ACTIVITY_START,
         "identities": IDENTITIES, "proofs": PROOFS, "ts": PROOF_TS},
        closed=False,
    ),
    "DeviceTokenUpdate": obj(
        {},
        {"push_token": string("Required for `ios` and `android`.", minLength=1, maxLength=4096),
         "subscription": ref("WebPushSubscription"),
         "declarative": {"type": "boolean",
                         "description": "`webpush` only: absent keeps the device's choice, for a new subscription "
                                        "too; true or false sets it."},
         "platform": PLATFORM,
         "seal_key": string("Absent keeps the key, `\"\"` removes it, anything else replaces it."),
         "lsp_node_id": string("Absent keeps the LSP node id, `\"\"` removes it, anything else replaces it "
                               "(66 hex digits)."),
         "identities": {**IDENTITIES, "description": "Absent keeps the identities, `[]` removes them, anything "
                                                     "else replaces them (each proven in `proofs`)."},
         "live_activity": LIVE_ACTIVITY_START,
         "proofs": PROOFS, "ts": PROOF_TS},
        closed=False,
    ),
    "DeviceConfirmation": obj({"code": string("The code from the `herald_challenge` push.", minLength=1,
                                              maxLength=64)}),
    "VAPIDPublicKey": obj(
        {"public_key": string("Base64url of the uncompressed P-256 public key (65 bytes).", minLength=1),
         "app": string(minLength=1)},
    ),
    "DeviceRegistration": obj(
        {"device_id": string(minLength=1), "device_secret": string("Shown once: the bearer of the device routes.",
                                                                    minLength=1),
         "alias": string(minLength=1), "webhook_url": string("Give it to the wallet SDK (`register_webhook`), "
                                                            "or to an LSP in `lsps5.set_webhook`.")},
        {"seal_kid": string("Hex id of the seal key; absent when pushes are not sealed."),
         "app": string("The app the device belongs to."),
         "lsp_node_id": string("The LSP node id LSPS5 notifications are checked against, lower-case hex.",
                               pattern="^0[23][0-9a-f]{64}$"),
         "identities": {"type": "array", "items": string(), "description": "The identities proven; absent: none."},
         "confirmed": BOOL | {"description": "`registration: challenge` only: false until the challenge push's code "
                                             "comes back (the alias pushes nothing else until then)."}},
    ),
    "Device": obj(
        {"device_id": string(minLength=1), "alias": string(minLength=1), "webhook_url": string()},
        {"seal_kid": string(), "app": string(), "lsp_node_id": string(pattern="^0[23][0-9a-f]{64}$"),
         "identities": STRINGS,
         "confirmed": BOOL | {"description": "`registration: challenge` only: whether the device's token is confirmed."}},
    ),
    "BreezPaymentWebhook": obj(
        {"template": {"const": "spark_payment_received"},
         "data": obj(
             {"payment_hash": string("64 hex digits.", pattern="^[0-9A-Fa-f]{64}$"),
              "user_pubkey": string("The Spark identity key of the user paid (66 hex digits): every device that "
                                    "proved `ln:<user_pubkey>` gets the push.", pattern="^0[23][0-9A-Fa-f]{64}$")},
             {"invoice": string(), "preimage": string("Never forwarded to a phone."),
              "amount_sat": {"type": ["integer", "null"], "minimum": 0},
              "lightning_address": {"type": ["string", "null"]}, "sender_comment": {"type": ["string", "null"]},
              "timestamp": integer("Milliseconds since the epoch when Breez queued it.")},
             closed=False)},
        closed=False,
        description="What Breez's LNURL server for the Spark SDK POSTs when a Lightning address is paid "
                    "(breez/spark-sdk `lnurl_webhooks.md`).",
    ),
    "BreezPaymentAnswer": obj(
        {"devices": integer("Devices the push went to.", minimum=0)},
        {"jobs": JOB_IDS,
         "skipped": integer("Devices holding the identity left out: not confirmed yet (`registration: challenge`), a dead "
                            "token, or over their push allowance. Absent when none.", minimum=1)},
    ),
    "LocalPushFeed": obj(
        {"pushes": {"type": "array", "items": obj(
            {"seq": integer(), "platform": PLATFORM,
             "payload": {"description": "The push as the device gets it: APNs userInfo or the FCM data map."}})},
         "next": integer("The `after` to ask with next.")},
    ),
    "PresenceHeartbeat": obj(
        {}, {"ttl_seconds": integer("Seconds present; 30 when absent.", minimum=1, maximum=300)}, closed=False,
    ),
    "PresenceAnswer": obj({"present": {"const": True}, "ttl_seconds": integer(minimum=1, maximum=300)}),
    "WakeRequest": obj(
        {"device": string("The device_id from registration.", minLength=1, maxLength=128,
                          pattern="^[A-Za-z0-9._~@+-]+$"),
         "kind": string("`incomingHtlc`, `cjitPaymentArrived`, `orderPaymentConfirmed`, `mutualClose`, "
                        "`liquidityManagementRequest`, `expirySoon` or your own.",
                        pattern="^[A-Za-z0-9_.-]{1,48}$", examples=["incomingHtlc"])},
        {"payment_hash": string("Hex; repeated wakes of one payment are recognised by it.",
                                pattern="^[0-9A-Fa-f]{1,128}$"),
         "amount_msat": integer(minimum=0),
         "expires_at": integer("Unix seconds; must be in the future (`400 expired`)."),
         "wake_alert": {"type": "string", "enum": ["always", "fallback"],
                        "description": "iOS: `always` sends the alert with the silent push; `fallback` sends the "
                                       "silent push alone and the alert `fallback_after_secs` later, unless the "
                                       "device acknowledges the wake `handled` first. Absent: the server's "
                                       "`wake_alert`."},
         "fallback_after_secs": integer("Seconds a `fallback` wake waits for the `handled` ack before its alert "
                                        "(`400 invalid_fallback_after` outside 1 to 60). Absent: the server's "
                                        "`wake_fallback_after`.", minimum=1, maximum=60)},
        closed=False,
    ),
    "WakePushed": obj({"pushed": {"const": True},
                       "job_ids": {**JOB_ID_LIST, "description": "One per push job: on iOS one job whose silent push is written ahead of its alert; on Android one."}},
                      {"wake_id": string("For `GET /api/v1/wake/{wake_id}`: the device's ack once the plugin sends it. "
                                         "Absent on a replay.", format="uuid")}),
    "WakeSkipped": obj({"pushed": {"const": False},
                        "reason": {"type": "string", "enum": ["present", "recently_woken"]}}),
    "IdentityWakeRequest": obj(
        {"identity": string("`ln:` and a node key (66 lower-case hex), or `pk:` and a pubky key (52 z-base-32).",
                            pattern="^(ln:0[23][0-9a-f]{64}|pk:[ybndrfg8ejkmcpqxot1uwisza345h769]{52})$"),
         "topic": string("A topic of `wake_gateway.topics`.", minLength=1, maxLength=64)},
        {"payload": {"description": "Any JSON, sealed into the wake as it is (compact, keys sorted); at most "
                                    "1024 bytes written compactly."},
         "collapse_key": string("Wakes with the same key replace each other on the phone; only its HMAC "
                                "leaves the server.", minLength=1, maxLength=256)},
        closed=False,
        description="A wake of every device that proved `identity` and subscribes to `topic` (Bitkit's wake "
                    "gateway).",
    ),
    "IdentityWakeAnswer": obj({
        "wake_id": string(format="uuid"),
        "devices": integer("Devices reached: `pushed` plus `present`.", minimum=0),
        "pushed": integer("Devices sent a push.", minimum=0),
        "present": integer("Devices connected now, told over their presence stream instead.", minimum=0),
        "skipped": integer("Devices holding the identity and topic left out: not confirmed yet, a dead token, or over "
                           "their push allowance.", minimum=0)}),
    "WakeStatus": obj(
        {"wake_id": string(format="uuid"), "identity": string(), "topic": string(),
         "deadline": integer("Unix seconds."),
         "devices": {"type": "array", "items": obj(
             {"device_id": string(), "pushed": BOOL, "present": BOOL,
              "fallback": {"type": "string", "enum": ["none", "pending", "cancelled", "sent", "failed"]}},
             {"outcome": {"type": "string", "enum": ["handled", "received", "no_handler", "failed"]}})}},
    ),
    "WakeServerInfo": obj({"audience": string("What registrations are signed for."), "server_time": integer(),
                           "version": string()}),
    "WakeTopicList": obj({"topics": {"type": "array", "items": obj(
        {"name": string(), "description": string(),
         "urgency": {"type": "string", "enum": ["background", "alert", "time_sensitive"]},
         "deadline_secs": integer(minimum=1), "peer": BOOL, "alertable": BOOL},
        {"display": obj({"title": string(), "body": string()})})}}),
    "WakeRegistration": obj(
        {"app": string(minLength=1, maxLength=64), "install_id": string(pattern="^[A-Za-z0-9_-]{16,64}$"),
         "platform": {"type": "string", "enum": ["apns", "fcm"]},
         "environment": {"type": "string", "enum": ["production", "sandbox"]},
         "push_token": string(minLength=1), "encryption_key": string(pattern="^0[23][0-9a-f]{64}$"),
         "secret_sha256": string(pattern="^[0-9a-f]{64}$"),
         "identities": {"type": "array", "items": string(), "minItems": 1, "maxItems": 2},
         "topics": {"type": "array", "items": string(), "maxItems": 32},
         "ts": integer("Unix seconds, within 600 s of the server's time."),
         "proofs": {"type": "array", "items": obj({"identity": string(), "sig": string()}, closed=False)}},
        closed=False,
        description="bitkit-core's registration: every identity signs the 12-line `wake-register-v1` preimage.",
    ),
    "WakeRegistrationAnswer": obj(
        {"device_id": string(), "identities": STRINGS,
         "topics": STRINGS, "unknown_topics": STRINGS,
         "server_time": integer()}),
    "WakeTopics": obj({"topics": STRINGS},
                      {"unknown_topics": STRINGS}, closed=False),
    "WakePresence": obj({"ttl_secs": integer("Clamped to 15 to 300.")}, closed=False),
    "WakePresenceAnswer": obj({"expires_at": integer("Unix seconds.")}),
    "LiveActivityToken": obj({"push_token": string("The token iOS gave the swap's started activity "
                                                   "(`pushTokenUpdates`), hex.", minLength=1, maxLength=4096)}),
    "WakeAck": obj({"id": string(format="uuid"),
                    "outcome": {"type": "string", "enum": ["handled", "received", "no_handler", "failed"]}}, closed=False),
    "WakeLegacyRegistration": obj(
        {"deviceToken": string(minLength=1), "features": STRINGS,
         "isProduction": BOOL, "isoTimestamp": string("ISO 8601, within 600 s."),
         "nodeId": string(pattern="^0[23][0-9a-f]{64}$"), "publicKey": string(pattern="^0[23][0-9a-f]{64}$"),
         "signature": string("The node's LN signed message over `bitkit-notifications` + deviceToken + "
                             "isoTimestamp, zbase32 or hex.")},
        closed=False,
        description="Deployed Bitkit apps' registration (bitkit-notification-server's `/api/device`).",
    ),
    "NwcRegistration": obj(
        {"webhookUrl": string("This server's device webhook URL (`…/api/v1/notify?…&token=<alias>`): pushed with "
                              "no HTTP hop; or another service's, POSTed breez-lnurl's body through the outbox."),
         "walletServicePubkey": string(pattern="^[0-9a-f]{64}$"), "appPubkey": string(pattern="^[0-9a-f]{64}$"),
         "relays": {"type": "array", "items": string("wss://"), "minItems": 1, "maxItems": 10},
         "signature": string("zbase32 LN signed message.")},
        closed=False),
    "NwcUnregistration": obj(
        {"time": integer("Unix seconds."), "walletServicePubkey": string(), "appPubkey": string(),
         "signature": string("zbase32 LN signed message.")},
        closed=False),
    "LSPS5Answer": obj(
        {"pushed": BOOL},
        {"job_ids": {**JOB_ID_LIST, "description": "When pushed: one job (on iOS the silent push written ahead of the alert)."},
         "reason": {"type": "string", "enum": ["present", "recently_woken", "acknowledged"],
                    "description": "Why nothing was pushed; `acknowledged` for `lsps5.webhook_registered`."},
         "wake_id": string("When pushed: the wake's id.", format="uuid")},
        description="The answer to an LSPS5 notification, always `200`: the LSP counts only `200` as success.",
    ),
    "ForwardingHint": obj(
        {"hint": {"type": "string", "enum": ["retry_now", "retry_later", "do_not_retry"]},
         "reason": {"type": "string", "enum": ["present", "waking", "disconnected", "unknown_device",
                                               "token_unregistered", "no_push_provider"]}},
        {"recommended_delay_ms": integer(minimum=0)},
    ),
    "ReplyAccepted": obj({"status": {"const": "accepted"}}),
    "LightningAddressClaim": obj(
        {"device_id": string(minLength=1),
         "username": string("LUD-16: 1 to 64 of a-z 0-9 - _ .", pattern="^[a-z0-9._-]{1,64}$")},
        {"offer": string("A BOLT 12 offer (`lno1…`) to publish by BIP-353 as `<username>.user.<zone>` TXT "
                         "`bitcoin:?lno=<offer>`; another offer replaces it. Needs `bip353.server` "
                         "(`400 bip353_not_configured`); checked per BOLT 12 (`400 invalid_offer`); a URI over "
                         "4,000 bytes is `400 offer_too_long`.", minLength=1)},
        closed=False,
    ),
    "LightningAddressRelease": obj({"device_id": string(minLength=1)}, closed=False),
    "LightningAddress": obj(
        {"username": string(), "lightning_address": string(), "lnurlp_url": string()},
        {"previous": string("The username this device had before a rename."),
         "bip353": string("`₿<username>@<domain>`, when the name carries an offer."),
         "bip353_state": string("The record in DNS: `published`, `pending` (committed, not yet written: the "
                                "server is retried while it is away) or `failed: <RCODE>`.")},
    ),
    "LnurlPayInfo": obj(
        {"callback": string(), "minSendable": integer(minimum=1), "maxSendable": integer(minimum=1),
         "metadata": string("The metadata JSON array, as a string."), "tag": {"const": "payRequest"}},
        {"commentAllowed": integer(minimum=0),
         "allowsNostr": {"const": True, "description": "NIP-57: present when zaps are configured."},
         "nostrPubkey": string("NIP-57: the x-only key zap receipts are signed with, 64 hex digits.")},
        closed=False,
        description="LUD-06 pay request as the wallet answered it, byte for byte; with zaps configured, Herald "
                    "adds `allowsNostr` and `nostrPubkey`.",
    ),
    "LnurlPayInvoice": obj(
        {"pr": string(minLength=1)}, {"routes": {"type": "array"}, "verify": string()}, closed=False,
        description="LUD-06 invoice (with the LUD-21 verify URL) as the wallet answered it.",
    ),
    "ZapPaymentReport": obj({"preimage": string("64 hex digits whose SHA-256 is the payment hash.")}),
    "ZapPaymentAnswer": obj({"relays": integer(minimum=0), "job_ids": JOB_IDS}),
    "LnurlPayVerification": obj(
        {"status": string(), "settled": BOOL, "preimage": {"type": ["string", "null"]}, "pr": string()},
        closed=False, description="LUD-21 verify answer as the wallet answered it.",
    ),
    "SessionPut": obj(
        {"allow_notifications": BOOL, "platform": PLATFORM},
        {"push_token": string("Required when allow_notifications is true (`subscription` for `webpush`).",
                              maxLength=4096),
         "subscription": ref("WebPushSubscription"),
         "seal_key": string("As on device registration; absent means none."),
         "app": string("The configured app whose credentials push to the token; absent: `default`.")},
        closed=False,
    ),
    "SessionPatch": obj(
        {}, {"allow_notifications": BOOL, "platform": PLATFORM, "push_token": string(maxLength=4096),
             "subscription": ref("WebPushSubscription"),
             "seal_key": string("Absent keeps the key, `\"\"` removes it."), "app": string()},
        closed=False,
    ),
    "Session": obj(
        {"session_id": string(), "platform": PLATFORM, "allow_notifications": BOOL,
         "token_status": {"type": "string", "enum": ["active", "dead", "none"]},
         "app": string("The app whose credentials push to the session."),
         "created_at": string(format="date-time"), "updated_at": string(format="date-time")},
        {"push_token": string(), "subscription": ref("WebPushSubscription"), "seal_kid": string()},
    ),
    "SessionList": obj(
        {"user_id": string(), "sessions": {"type": "array", "items": ref("Session")},
         "dropped_dead_tokens": integer(minimum=0)},
    ),
    "NotificationText": obj({"title": string(minLength=1), "body": string()}, {"image": string()}, closed=False),
    "BackendEvent": obj(
        {"action": string("`DEPOSIT_RECEIVED`, `DEPOSIT_CONFIRMED`, `WITHDRAWAL_INITIATED`, "
                          "`WITHDRAWAL_PROCESSED`, `NONE` or your own; the four documented ones need their "
                          "data fields.", minLength=1, maxLength=64, examples=["NONE"]),
         "notification": ref("NotificationText")},
        {"data": {"type": "object", "additionalProperties": {"type": ["string", "integer", "boolean"]},
                  "description": "Custom keys; integers and booleans travel as text."},
         "campaign_id": string(), "campaign_name": string(), "channel_id": string(), "color": string(),
         "icon": string()},
        closed=False,
    ),
    "EventResult": obj({"targeted": integer(minimum=0), "job_ids": JOB_IDS, "skipped_dead": integer(minimum=0)}),
    "Welcome": obj({}, {"notification": ref("NotificationText"), "channel_id": string(), "color": string(),
                        "icon": string()}, closed=False),
    "WelcomeResult": obj(
        {"sent": BOOL, "targeted": integer(minimum=0), "job_ids": JOB_IDS, "skipped_dead": integer(minimum=0)},
        {"reason": {"type": "string", "enum": ["already_sent", "no_active_sessions"]}},
    ),
    "Health": obj(
        {"status": {"type": "string", "enum": ["ok", "degraded"]},
         "database": {"type": "string", "enum": ["ok", "unavailable"]},
         "providers": obj({"ios": string("apns, local or none"), "android": string("fcm, local or none"),
                           "webpush": string("webpush, local or none")})},
    ),
    "DeadLetter": obj(
        {"id": string("The dead job's id."),
         "reason": string("The reason code: ttl_expired, permanent, max_attempts, token_unregistered, "
                          "undecodable_payload …"),
         "platform": JOB_PLATFORM,
         "token": string("The push token (a relay URL for `nostr`, a URL for `webhook`), redacted to its first characters."),
         "notification_type": string(),
         "attempts": integer(minimum=0),
         "created_at": string(format="date-time"),
         "dead_at": string("When it was given up on.", format="date-time"),
         "token_dead": {"type": "boolean", "description": "The token is marked dead: a replay is refused."}},
        {"last_error": string("The reason as recorded, e.g. `ttl_expired: 503 ServiceUnavailable`."),
         "provider_answer": string("The push service's last answer; absent when it was never asked."),
         "first_attempt_at": string(format="date-time"),
         "last_attempt_at": string(format="date-time")},
    ),
    "DeadLetterList": obj(
        {"dead_letters": {"type": "array", "items": ref("DeadLetter")}},
        {"next_cursor": string("Pass as `cursor` for the next page; absent on the last.")},
        description="Dead letters not yet replayed, newest first.",
    ),
    "Replay": obj(
        {"id": string("The dead letter."), "job_id": string("The new job."),
         "replayed": {"type": "boolean", "description": "False when an earlier replay made the job."}},
    ),
    "BulkReplay": obj(
        {"replayed": integer(minimum=0), "job_ids": JOB_IDS,
         "skipped_token_dead": integer("Letters left alone because their token is dead.", minimum=0)},
    ),
    "Purge": obj({"purged": integer("Letters deleted, replayed ones included.", minimum=0),
                  "replayed": integer("Of those, letters replayed before (the list showed only the others).", minimum=0)}),
    "OutboxCounts": obj(
        {"pending": integer("Never tried, not leased.", minimum=0),
         "leased": integer("Held by a dispatcher now.", minimum=0),
         "retrying": integer("Tried, waiting for the next attempt.", minimum=0),
         "total": integer(minimum=0)},
    ),
    "Outbox": obj(
        {"pending": integer(minimum=0), "leased": integer(minimum=0), "retrying": integer(minimum=0),
         "total": integer(minimum=0),
         "by_platform": {"type": "object", "additionalProperties": ref("OutboxCounts"),
                         "description": "The same counts per platform (`ios`, `android`)."},
         "by_app": {"type": "object", "additionalProperties": ref("OutboxCounts"),
                    "description": "The same counts per configured app (`default` for a single-app deployment)."},
         "dead_letters": integer("Dead letters not yet replayed.", minimum=0),
         "dead_tokens": integer("Push tokens marked dead.", minimum=0)},
        {"oldest_due_at": string("The earliest next attempt of a pending job.", format="date-time")},
        description="The outbox now. Breakdowns (`by_platform`, `by_app`) are maps beside the totals.",
    ),
}

# ---------------------------------------------------------------------------------------------
# Responses

REASONS = {200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 400: "Bad Request",
           401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 408: "Request Timeout", 409: "Conflict",
           410: "Gone", 413: "Content Too Large", 422: "Unprocessable Content", 429: "Too Many Requests",
           500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"}

RETRY_AFTER = {"Retry-After": shared("headers", "RetryAfter", {
    "description": "Seconds to wait before retrying.", "schema": {"type": "string"}})}
WWW_AUTHENTICATE = {"WWW-Authenticate": shared("headers", "WWWAuthenticate", {"schema": {"type": "string"}})}
LNURL_CACHE_CONTROL = {"Cache-Control": shared("headers", "LnurlCacheControl", {
    "description": "`max-age` the wallet allowed (not on invoices).", "schema": {"type": "string"}})}
LOCATION = {"Location": shared("headers", "Location", {"schema": {"type": "string"}})}
REPLAYED = {"Idempotent-Replayed": shared("headers", "IdempotentReplayed", {
    "description": "`true` when an earlier request with this Idempotency-Key answered already; nothing new was "
                   "pushed.",
    "schema": {"type": "string", "enum": ["true"]}})}


def json_body(schema: dict, description: str, headers: dict | None = None) -> dict:
    response = {"description": description, "content": {JSON: {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return response


def error_response(status: int, codes: list[str], description: str | None = None, *, lnurl: bool = False) -> dict:
    """An error status with the exact `error` codes it can carry."""
    for code in codes:
        assert code in CODES, f"{code} is not an ErrorCode"
        assert CODES[code] == status, f"{code} comes with {CODES[code]}, not {status}"
    schema = narrowed("LnurlFailure" if lnurl else "Error", codes)
    headers = {}
    if status in (429, 503):
        headers.update(RETRY_AFTER)
    if status == 401:
        headers.update(WWW_AUTHENTICATE)
    text = description or (REASONS[status] + ": " + ", ".join(f"`{code}`" for code in codes))
    return json_body(schema, text, headers or None)


def errors(table: dict[int, list[str]], *, body: bool, lnurl: bool = False) -> dict[str, dict]:
    """The error responses of one operation. Every operation can meet the connection cap (503
    `too_many_connections`); one that reads a body can meet a malformed or slow one."""
    table = {status: list(codes) for status, codes in table.items()}
    table.setdefault(503, [])
    if "too_many_connections" not in table[503]:
        table[503].append("too_many_connections")
    if body:
        table.setdefault(400, []).extend(["malformed_request", "bad_request"])
        table.setdefault(408, []).append("request_timeout")
    table.setdefault(500, []).append("internal")
    out = {}
    for status in sorted(table):
        codes = table[status]
        if lnurl and status != 503:
            out[str(status)] = error_response(status, codes, lnurl=True)
        elif lnurl:
            # The connection cap answers in Herald's shape before any route runs.
            schema = {"oneOf": [narrowed("LnurlFailure", codes), narrowed("Error", ["too_many_connections"])]}
            out["503"] = json_body(schema, "Service Unavailable: " + ", ".join(codes), RETRY_AFTER)
        else:
            out[str(status)] = error_response(status, codes)
    return out


NO_CONTENT = {"description": "Done; no body."}
AUTH_API = [401, 403]
STORE = ["store_unavailable"]
INTAKE = ["shutting_down", "store_unavailable", "overloaded"]
PUSH_422 = ["payload_too_large", "invalid_message"]


def api_key(scope: str) -> list[dict]:
    return [{"apiKey": [scope]}]


DEVICE_SECRET = [{"deviceSecret": []}]


def path_param(name: str, description: str, **schema) -> dict:
    return {"name": name, "in": "path", "required": True, "description": description,
            "schema": {"type": "string", "minLength": 1, **schema}}


def query_param(name: str, description: str, schema: dict, required: bool = False) -> dict:
    return {"name": name, "in": "query", "required": required, "description": description, "schema": schema}


IDEMPOTENCY = shared("parameters", "IdempotencyKey", {
    "name": "Idempotency-Key", "in": "header", "required": False,
    "description": "1 to 255 bytes; a repeat returns the first answer and pushes nothing new.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"}})
DEVICE_ID = shared("parameters", "DeviceId", path_param("id", "The device_id from registration."))
USER_ID = shared("parameters", "UserId", path_param("user_id", "1 to 128 of letters, digits and . _ ~ @ + -",
                                                    maxLength=128, pattern="^[A-Za-z0-9._~@+-]+$"))
SESSION_ID = shared("parameters", "SessionId", path_param("session_id", "1 to 128 of letters, digits and . _ ~ @ + -",
                                                          maxLength=128, pattern="^[A-Za-z0-9._~@+-]+$"))
USERNAME = shared("parameters", "Username", path_param("username", "The Lightning address's user part.", maxLength=64))
PAYMENT_HASH = shared("parameters", "PaymentHash", path_param("payment_hash", "64 hex digits."))
DEAD_LETTER_ID = shared("parameters", "DeadLetterId", path_param("id", "The dead letter's id."))
DEAD_LETTER_FILTERS = [
    shared("parameters", "DeadLetterReason", query_param(
        "reason", "Only letters with this reason code (`ttl_expired` matches `ttl_expired: …`).",
        {"type": "string", "maxLength": 64, "pattern": "^[A-Za-z0-9_]*$"})),
    shared("parameters", "DeadLetterPlatform", query_param("platform", "Only letters for this platform.",
                                                           {"type": "string"})),
]


def request_body(schema: dict, required: bool = True, description: str | None = None) -> dict:
    body = {"required": required, "content": {JSON: {"schema": schema}}}
    if description:
        body["description"] = description
    return body


def op(operation_id: str, summary: str, responses: dict, *, tags: list[str], description: str | None = None,
       parameters: list | None = None, body: dict | None = None, security: list | None = None) -> dict:
    out: dict = {"operationId": operation_id, "summary": summary, "tags": tags}
    if description:
        out["description"] = description
    if parameters:
        out["parameters"] = parameters
    if body:
        out["requestBody"] = body
    out["security"] = security if security is not None else []
    out["responses"] = responses
    return out


LNURL_ERRORS = {400: ["platform_not_configured"], 404: [], 410: [], 422: PUSH_422, 429: ["target_rate_limited"],
                502: [], 503: ["store_unavailable", "overloaded", "shutting_down"], 504: []}


def lnurl_errors(extra_400: bool = False) -> dict:
    """LNURL failures: `{"status":"ERROR","reason"}`, with `error` only when the failure is one of
    Herald's API errors. The codes listed are those; the rest carry no `error`."""
    table = {status: list(codes) for status, codes in LNURL_ERRORS.items()}
    responses = {}
    for status, codes in sorted(table.items()):
        if status == 503:
            continue
        schema = narrowed("LnurlFailure", codes) if codes else ref("LnurlFailure")
        what = {400: "an invalid request (amount, comment, hash, no pay request yet)" if extra_400 else
                "the owner's platform has no provider",
                404: "unknown Lightning address", 410: "the wallet's push token is dead",
                422: "the push would be too large", 429: "the wallet's phone had its share of pushes",
                502: "the wallet answered with an invalid body", 504: "the wallet did not answer in time"}[status]
        responses[str(status)] = json_body(schema, f"{REASONS[status]}: {what}",
                                           RETRY_AFTER if status == 429 else None)
    responses.update(errors({503: table[503]}, body=False, lnurl=True))
    return responses


def lnurl_ok(schema_name: str, what: str) -> dict:
    return json_body({"oneOf": [ref(schema_name), ref("LnurlError")]},
                     f"The wallet's {what}, or an LNURL `ERROR` it answered itself.",
                     LNURL_CACHE_CONTROL)


def paths() -> dict:
    p: dict[str, dict] = {}

    p["/api/v1/notify"] = {"post": op(
        "notify", "The webhook: turn an event into a push", tags=["Webhook"],
        description="Breez-compatible. Acknowledged with the job id once committed. `invoice.request` and the "
                    "`lnurlpay_*` templates without a `reply_url` are held until the device answers on the "
                    "reply URL Herald adds, and answered with that answer (or 504). A call carrying either LSPS5 "
                    "header is an LSPS5 (bLIP-55) notification for a registered device: checked (timestamp within "
                    "10 minutes, signature by the registered `lsp_node_id`, not seen before) and turned into a "
                    "wake of the device.",
        parameters=[
            query_param("token", "A registered alias, or a raw push token when the operator allows them "
                                 "(printable ASCII, as aliases and APNs/FCM tokens are; at most 4096 bytes).",
                        {"type": "string", "minLength": 1, "maxLength": 4096, "pattern": "^[!-~]+$"}, required=True),
            query_param("platform", "Needed with a raw token.", PLATFORM),
            query_param("app_data", "Passed to the device as `app_data`.", {"type": "string"}),
            query_param("app", "With a raw token: the configured app whose credentials send it (default "
                               "`default`). A registered alias brings its device's app.", {"type": "string"}),
            IDEMPOTENCY,
            {"name": "x-lsps5-timestamp", "in": "header", "required": False,
             "description": "LSPS5: when the LSP made the notification (RFC 3339).",
             "schema": {"type": "string", "maxLength": 64, "examples": ["2023-05-04T10:14:23.853Z"]}},
            {"name": "x-lsps5-signature", "in": "header", "required": False,
             "description": "LSPS5: zbase32 Lightning message signature by the LSP's node key (104 characters).",
             "schema": {"type": "string", "maxLength": 256}},
        ],
        body=request_body(ref("WebhookBody")),
        responses={
            "200": json_body({"anyOf": [ref("JobAccepted"), ref("LSPS5Answer"), ref("RelayedAnswer")]},
                             "The job id, or for a held request the device's answer, or for an LSPS5 "
                             "notification the wake's answer.",
                             {**REPLAYED, "Cache-Control": {"schema": {"type": "string"}}}),
            **errors({
                400: ["invalid_json", "unknown_body_shape", "unknown_platform", "missing_platform", "missing_token",
                      "alias_required",
                      "invalid_token", "invalid_idempotency_key", "platform_not_configured", "unknown_app",
                      "invalid_notification"],
                401: ["invalid_signature", "stale_timestamp"], 403: ["device_unconfirmed"], 409: ["replayed"],
                404: ["unknown_token"], 410: ["token_unregistered", "device_deleted"], 413: ["body_too_large"],
                422: ["invalid_data", "idempotency_key_reused", *PUSH_422], 429: ["target_rate_limited", "too_many_held_requests"],
                503: INTAKE,
                504: ["reply_timeout"],
            }, body=True),
        })}

    p["/api/v1/breez/payments"] = {"post": op(
        "breezPayment", "Breez's Spark payment webhook: a Lightning address was paid", tags=["Webhook"],
        description="Checked against `breez.webhook_secret_file` (HMAC-SHA256 of the raw body), deduplicated on "
                    "the payment hash (a retry answers the same jobs with `Idempotent-Replayed: true` and pushes "
                    "nothing), and pushed as `payment_received` with `{payment_hash, amount_sat, lightning_address, "
                    "sender_comment}` and a visible alert to every device that proved `ln:<user_pubkey>`. A user "
                    "with no device is `202 {\"devices\": 0}`: Breez would retry an error for days.",
        parameters=[{"name": "X-Breez-Signature", "in": "header", "required": False,
                     "description": "Hex HMAC-SHA256 of the raw body under the domain's webhook secret.",
                     "schema": {"type": "string", "maxLength": 128}}],
        body=request_body(ref("BreezPaymentWebhook")),
        responses={
            "200": json_body(ref("BreezPaymentAnswer"), "Pushed: one job per device.", REPLAYED),
            "202": json_body(ref("BreezPaymentAnswer"), "No device holds the identity: nothing to push."),
            **errors({400: ["invalid_json"], 401: ["invalid_signature"], 404: ["not_configured"],
                      413: ["body_too_large"], 422: ["invalid_body", "unsupported_template", *PUSH_422],
                      429: ["target_rate_limited"], 503: INTAKE}, body=True),
        })}

    p["/api/v1/reply/{id}"] = {"post": op(
        "reply", "The device answers a held request", tags=["Webhook"],
        parameters=[path_param("id", "The reply id from the push's `reply_url`.", maxLength=64)],
        body=request_body({"type": "object"}, description="Any JSON object, at most 64 KiB; the caller gets it "
                                                          "byte for byte. `Cache-Control: max-age` travels with it."),
        responses={
            "200": json_body(ref("ReplyAccepted"), "Taken: the caller gets it."),
            **errors({400: ["invalid_json"], 404: ["unknown_reply"], 409: ["already_answered"],
                      410: ["reply_expired"], 413: ["reply_too_large"], 503: STORE}, body=True),
        })}

    p["/api/v1/devices"] = {"post": op(
        "registerDevice", "Register an app's push token", tags=["Devices"],
        description="With `registration: open` (the default) and `challenge` no key is needed; rate-limited per "
                    "client address. With `challenge` the device's alias pushes nothing but a `herald_challenge` "
                    "push carrying a one-time code until the app posts it to `/api/v1/devices/{id}/confirm` (the "
                    "plugin does so by itself). With `key` an API key of scope `devices` is needed.",
        body=request_body(ref("DeviceRegistrationRequest")),
        responses={
            "201": json_body(ref("DeviceRegistration"), "Registered."),
            **errors({400: ["invalid_json", "unknown_platform", "invalid_token", "invalid_subscription",
                           "private_endpoint", "unresolvable_endpoint", "invalid_seal_key", "unknown_app", "invalid_lsp_node_id",
                           "platform_not_configured", "invalid_request", *IDENTITY_400],
                      401: ["invalid_proof", "stale_timestamp", "unauthorized"], 403: ["forbidden"],
                      409: ["too_many_devices", "proof_replayed"],
                      413: ["body_too_large"], 422: ["invalid_body"], 429: ["rate_limited"], 503: STORE},
                     body=True),
        })}

    p["/api/v1/webpush/vapid-public-key"] = {"get": op(
        "vapidPublicKey", "The VAPID public key apps subscribe with", tags=["Devices"],
        description="The `applicationServerKey` for `pushManager.subscribe`, or a UnifiedPush connector's VAPID "
                    "key. No key needed.",
        parameters=[query_param("app", "The configured app; absent: `default`.", string(minLength=1))],
        responses={
            "200": json_body(ref("VAPIDPublicKey"), "The key."),
            **errors({400: ["unknown_app"], 404: ["not_configured"]}, body=False),
        })}

    p["/api/v1/devices/{id}/confirm"] = {"post": op(
        "confirmDevice", "The app proves it received the challenge push at its token", tags=["Devices"],
        description="`registration: challenge`: the one-time code from the `herald_challenge` push. The code is "
                    "the credential (the device secret is not needed); the plugin posts it by itself.",
        parameters=[DEVICE_ID], body=request_body(ref("DeviceConfirmation")),
        responses={
            "200": json_body(obj({"confirmed": {"const": True}}), "Confirmed: the alias pushes from now on."),
            **errors({400: ["invalid_json"], 403: ["invalid_code"], 413: ["body_too_large"], 422: ["invalid_body"],
                      503: STORE}, body=True),
        })}

    p["/api/v1/devices/{id}"] = {
        "put": op(
            "updateDevice", "The OS rotated the push token", tags=["Devices"], security=DEVICE_SECRET,
            parameters=[DEVICE_ID], body=request_body(ref("DeviceTokenUpdate")),
            responses={
                "200": json_body(ref("Device"), "Updated."),
                **errors({400: ["invalid_json", "unknown_platform", "invalid_token", "invalid_subscription",
                               "private_endpoint", "unresolvable_endpoint", "invalid_seal_key", "invalid_lsp_node_id", "platform_not_configured",
                               "invalid_request", *IDENTITY_400],
                          401: ["unauthorized", "invalid_proof", "stale_timestamp"], 409: ["too_many_devices", "proof_replayed"],
                          413: ["body_too_large"], 422: ["invalid_body"], 503: STORE},
                         body=True),
            }),
        "delete": op(
            "deleteDevice", "Forget the device (and release its Lightning address)", tags=["Devices"],
            security=DEVICE_SECRET, parameters=[DEVICE_ID],
            responses={"204": NO_CONTENT, **errors({401: ["unauthorized"], 503: STORE}, body=False)}),
    }

    p["/api/v1/devices/{id}/pushes"] = {"get": op(
        "localPushes", "The local development provider's pushes for the device (long poll)", tags=["Devices"],
        description="Only with the local development provider (no push credentials); otherwise `404 not_found`.",
        security=DEVICE_SECRET,
        parameters=[DEVICE_ID,
                    query_param("after", "Only pushes after this `seq`.", {"type": "integer", "minimum": 0}),
                    query_param("wait", "Seconds to wait for one (0 to 30).",
                                {"type": "number", "minimum": 0, "maximum": 30})],
        responses={"200": json_body(ref("LocalPushFeed"), "The pushes, oldest first (possibly none)."),
                   **errors({401: ["unauthorized"], 403: ["token_registered_elsewhere"], 404: ["not_found"], 503: STORE}, body=False)})}

    p["/api/v1/devices/{id}/presence"] = {
        "post": op(
            "presenceHeartbeat", "The app is in the foreground", tags=["Presence"], security=DEVICE_SECRET,
            parameters=[DEVICE_ID], body=request_body(ref("PresenceHeartbeat"), required=False),
            responses={
                "200": json_body(ref("PresenceAnswer"), "Present for the TTL granted."),
                **errors({400: ["invalid_json", "invalid_ttl"], 401: ["unauthorized"], 413: ["body_too_large"],
                          422: ["invalid_body"], 503: STORE}, body=True),
            }),
        "delete": op(
            "presenceLeave", "The app went to the background", tags=["Presence"], security=DEVICE_SECRET,
            parameters=[DEVICE_ID],
            responses={"204": NO_CONTENT, **errors({401: ["unauthorized"], 503: STORE}, body=False)}),
    }

    p["/api/v1/devices/{id}/presence/stream"] = {"get": op(
        "presenceStream", "Present while this server-sent event stream is held", tags=["Presence"],
        security=DEVICE_SECRET, parameters=[DEVICE_ID],
        responses={
            "200": {"description": "`: connected`, then `event: wake` with `data:` a JSON "
                                   "`{\"kind\", \"payment_hash\", \"amount_msat\"}` per wake, and `: keep-alive` "
                                   "every 15 s. A device holds two streams at most (a third ends the oldest), and "
                                   "the server ends a stream after an hour: the reporter reconnects.",
                    "content": {"text/event-stream": {"schema": {"type": "string"}}}},
            **errors({401: ["unauthorized"], 503: ["store_unavailable", "too_many_streams"]}, body=False),
        })}

    p["/api/v1/wake"] = {"post": op(
        "wake", "Wake a device for a payment, or an identity on a topic", tags=["Wake"], security=api_key("wake"),
        description="With `device`: that device. With `identity` and `topic`: every device that proved the "
                    "identity through the wake gateway and subscribes to the topic gets one sealed push, unless "
                    "present; an alertable topic's devices a fallback alert `fallback_after_secs` later unless "
                    "they acknowledge `handled`.",
        parameters=[IDEMPOTENCY], body=request_body({"oneOf": [ref("WakeRequest"), ref("IdentityWakeRequest")]}),
        responses={
            "200": json_body(ref("WakeSkipped"), "Not pushed: the app is present (told on its stream), or the "
                                                 "same payment was woken moments ago."),
            "202": json_body({"oneOf": [ref("WakePushed"), ref("IdentityWakeAnswer")]},
                             "Pushed (a device), or woken (an identity: `wake_id` for the status).", REPLAYED),
            **errors({400: ["invalid_json", "invalid_device", "invalid_kind", "invalid_payment_hash", "expired",
                            "invalid_idempotency_key", "platform_not_configured", "invalid_identity",
                            "invalid_collapse_key", "invalid_fallback_after"],
                      401: ["unauthorized"], 403: ["forbidden"], 404: ["unknown_device"],
                      410: ["token_unregistered"], 413: ["body_too_large", "wake_payload_too_large"],
                      422: ["invalid_body", "idempotency_key_reused", "unknown_topic", *PUSH_422],
                      429: ["target_rate_limited"], 503: INTAKE}, body=True),
        })}

    wake_ack = shared("requestBodies", "WakeAck", request_body(ref("WakeAck")))
    p["/api/v1/devices/{id}/acks"] = {"post": op(
        "acknowledgeWake", "The plugin says what became of a wake", tags=["Wake"], security=DEVICE_SECRET,
        description="The push's `wake_id`, `handled`, `received`, `no_handler` or `failed`; the waker reads it at "
                    "`GET /api/v1/wake/{wake_id}`. A later ack never undoes `handled`. `received` (the app is at work) "
                    "gives a pending fallback alert `wake_fallback_grace` from the ack.",
        parameters=[DEVICE_ID], body=wake_ack,
        responses={"204": NO_CONTENT,
                   **errors({400: ["invalid_json"], 401: ["unauthorized"], 404: ["unknown_wake"], 413: ["body_too_large"],
                             422: ["invalid_body"], 503: STORE}, body=True)})}

    swap_id = shared("parameters", "SwapId", path_param(
        "swap_id", "The swap's id as Breez's `swap.update` names it: 1 to 128 printable ASCII characters.",
        maxLength=128))
    p["/api/v1/devices/{id}/live-activities/{swap_id}"] = {
        "put": op(
            "putLiveActivityToken", "The token of a swap's started Live Activity", tags=["Devices"],
            security=DEVICE_SECRET,
            description="Later `swap.update` statuses of the swap update (priority 5) and end (priority 10) the "
                        "activity through it. iOS devices only.",
            parameters=[DEVICE_ID, swap_id], body=request_body(ref("LiveActivityToken")),
            responses={"204": NO_CONTENT,
                       **errors({400: ["invalid_json", "invalid_request", "invalid_token"], 401: ["unauthorized"],
                                 413: ["body_too_large"], 422: ["invalid_body"], 503: STORE}, body=True)}),
        "delete": op(
            "deleteLiveActivity", "Forget a swap's Live Activity", tags=["Devices"], security=DEVICE_SECRET,
            parameters=[DEVICE_ID, swap_id],
            responses={"204": NO_CONTENT,
                       **errors({400: ["invalid_request"], 401: ["unauthorized"], 404: ["unknown_live_activity"],
                                 503: STORE}, body=False)}),
    }

    p["/api/v1/wake/{wake_id}"] = {"get": op(
        "wakeStatus", "What became of a wake by identity", tags=["Wake"], security=api_key("wake"),
        parameters=[path_param("wake_id", "The `wake_id` the wake answered.", maxLength=64)],
        responses={"200": json_body(ref("WakeStatus"), "The wake and each device's push, ack and fallback."),
                   **errors({401: ["unauthorized"], 403: ["forbidden"], 404: ["unknown_wake"], 503: STORE},
                            body=False)})}

    node_key = shared("parameters", "NodeKey", path_param("pubkey", "The signing node key: 66 lower-case hex digits.",
                                                          maxLength=66))
    nwc_text = {"content": {"text/plain": {"schema": {"type": "string"}}}}
    p["/nwc/{pubkey}"] = {
        "post": op(
            "nwcRegister", "Watch a wallet's NWC service key on its relays (breez-lnurl's registration)", tags=["NWC"],
            description="Signed by the node key in the path: an LN signed message over "
                        "`<webhookUrl>-<walletServicePubkey>-<appPubkey>-[<relays joined by one space>]`. Requests "
                        "(kind 23194) from `appPubkey` to `walletServicePubkey` on `relays` are pushed to the device "
                        "whose webhook URL `webhookUrl` is, as `nwc_event`, once each.",
            parameters=[node_key],
            body=request_body(ref("NwcRegistration")),
            responses={"200": {"description": "`Pubkey registered successfully`", **nwc_text},
                       **errors({400: ["invalid_json", "invalid_pubkey", "invalid_relays", "private_relay",
                                       "unresolvable_relay", "too_many_relays", "invalid_webhook_url", "private_webhook_url"],
                                 401: ["invalid_signature"], 413: ["body_too_large"],
                                 422: ["invalid_body"], 429: ["rate_limited", "too_many_registrations"], 503: STORE},
                                body=True)}),
        "delete": op(
            "nwcUnregister", "Stop watching (breez-lnurl's unregistration)", tags=["NWC"],
            description="Signed over `<time>-<walletServicePubkey>-<appPubkey>`; `time` within 60 s of the server's clock.",
            parameters=[node_key],
            body=request_body(ref("NwcUnregistration")),
            responses={"200": {"description": "`Pubkey unregistered successfully`, whether there was one or not.", **nwc_text},
                       **errors({400: ["invalid_json", "invalid_pubkey"], 401: ["invalid_signature", "stale_time"],
                                 413: ["body_too_large"], 422: ["invalid_body"], 503: STORE}, body=True)}),
    }

    gateway = ["Wake gateway"]
    secret = [{"wakeDeviceSecret": []}]
    unauthorized = {401: ["unauthorized"]}
    p["/wake/v1/info"] = {"get": op(
        "wakeGatewayInfo", "The audience registrations are signed for", tags=gateway,
        responses={"200": json_body(ref("WakeServerInfo"), "The gateway."), **errors({}, body=False)})}
    p["/wake/v1/topics"] = {"get": op(
        "wakeGatewayTopics", "The topics devices can subscribe to", tags=gateway,
        responses={"200": json_body(ref("WakeTopicList"), "The configured topics."), **errors({}, body=False)})}
    p["/wake/v1/devices"] = {"post": op(
        "wakeGatewayRegister", "Register a device with identity proofs (bitkit-core)", tags=gateway,
        description="A registration from the same install replaces the earlier one if it proves one of its identities "
                    "or presents its `wkd_` secret as `Authorization: Bearer` (else `409 install_taken`); of two, the "
                    "later by Herald's clock wins. "
                    "Patterns and known names are stored; unknown exact names come back in `unknown_topics`. "
                    "With `registration: key` an API key of scope `devices` is needed, as on `POST /api/v1/devices`.",
        body=request_body(ref("WakeRegistration")),
        responses={"201": json_body(ref("WakeRegistrationAnswer"), "Registered."),
                   **errors({400: ["invalid_request", "platform_not_configured"],
                             401: ["stale_timestamp", "invalid_proof", "missing_proof", "unauthorized"], 403: ["forbidden"],
                             409: ["install_taken", "too_many_devices", "proof_replayed"],
                             413: ["body_too_large"], 429: ["rate_limited"], 503: STORE}, body=True)})}
    p["/wake/api/device"] = {"post": op(
        "wakeGatewayLegacyRegister", "Register a deployed Bitkit app (legacy, v0 envelopes)", tags=gateway,
        body=request_body(ref("WakeLegacyRegistration")),
        responses={"200": json_body(ref("WakeRegistrationAnswer"), "Registered."),
                   **errors({400: ["invalid_request", "platform_not_configured"],
                             401: ["stale_timestamp", "invalid_signature", "unauthorized"], 403: ["forbidden"],
                             409: ["install_taken", "too_many_devices", "proof_replayed"],
                             413: ["body_too_large"], 429: ["rate_limited"], 503: STORE}, body=True)})}
    p["/wake/v1/devices/self/topics"] = {"put": op(
        "wakeGatewaySetTopics", "Replace the device's topics", tags=gateway, security=secret,
        body=request_body(ref("WakeTopics")),
        responses={"200": json_body(ref("WakeTopics"), "Stored, and the unknown names."),
                   **errors({400: ["invalid_request"], **unauthorized, 413: ["body_too_large"], 503: STORE},
                            body=True)})}
    p["/wake/v1/devices/self"] = {"delete": op(
        "wakeGatewayUnregister", "Unregister: the secret is revoked", tags=gateway, security=secret,
        responses={"204": NO_CONTENT, **errors({**unauthorized, 503: STORE}, body=False)})}
    p["/wake/v1/presence"] = {
        "put": op("wakeGatewaySetPresence", "The app is in use: wakes are not pushed", tags=gateway, security=secret,
                  body=request_body(ref("WakePresence")),
                  responses={"200": json_body(ref("WakePresenceAnswer"), "Present until then."),
                             **errors({400: ["invalid_request"], **unauthorized, 413: ["body_too_large"],
                                       503: STORE}, body=True)}),
        "delete": op("wakeGatewayClearPresence", "Presence ends", tags=gateway, security=secret,
                     responses={"204": NO_CONTENT, **errors({**unauthorized, 503: STORE}, body=False)}),
    }
    p["/wake/v1/acks"] = {"post": op(
        "wakeGatewayAck", "Acknowledge a wake: `handled` cancels its fallback", tags=gateway, security=secret,
        body=wake_ack,
        responses={"204": NO_CONTENT,
                   **errors({400: ["invalid_request"], **unauthorized, 404: ["unknown_wake"], 413: ["body_too_large"],
                             503: STORE}, body=True)})}

    p["/api/v1/forwarding_hint"] = {"get": op(
        "forwardingHint", "Should a failed payment to this device be retried?", tags=["Wake"],
        security=api_key("wake"),
        parameters=[query_param("recipient", "The device id.", {"type": "string", "minLength": 1}, required=True),
                    query_param("amount_msat", "Millisatoshis.", {"type": "integer", "minimum": 0})],
        responses={"200": json_body(ref("ForwardingHint"), "The hint."),
                   **errors({400: ["missing_recipient", "invalid_amount"], 401: ["unauthorized"],
                             403: ["forbidden"], 503: STORE}, body=False)})}

    p["/api/v1/lnurlpay"] = {
        "post": op(
            "claimLightningAddress", "Claim or rename the device's Lightning address", tags=["Lightning addresses"],
            security=DEVICE_SECRET, body=request_body(ref("LightningAddressClaim")),
            responses={
                "200": json_body(ref("LightningAddress"), "Renamed (with `previous`), or already this name."),
                "201": json_body(ref("LightningAddress"), "Claimed."),
                **errors({400: ["invalid_json", "invalid_username", "bip353_not_configured", "invalid_offer",
                               "offer_too_long"], 401: ["unauthorized"],
                          403: ["device_unconfirmed"],
                          409: ["username_taken"], 413: ["body_too_large"], 422: ["invalid_body"], 503: STORE},
                         body=True),
            }),
        "get": op(
            "showLightningAddress", "The device's Lightning address and its BIP-353 record's state",
            tags=["Lightning addresses"], security=DEVICE_SECRET,
            parameters=[query_param("device_id", "The device id.", {"type": "string", "minLength": 1})],
            responses={
                "200": json_body(ref("LightningAddress"), "The address."),
                **errors({401: ["unauthorized"], 404: ["no_username"], 503: STORE}, body=False),
            }),
        "delete": op(
            "releaseLightningAddress", "Release the device's Lightning address", tags=["Lightning addresses"],
            description="The device id comes as `?device_id=` or in a JSON body.",
            security=DEVICE_SECRET,
            parameters=[query_param("device_id", "The device id (or send it in the body).",
                                    {"type": "string", "minLength": 1})],
            body=request_body(ref("LightningAddressRelease"), required=False),
            responses={
                "204": NO_CONTENT,
                **errors({400: ["invalid_json"], 401: ["unauthorized"], 404: ["no_username"],
                          413: ["body_too_large"], 422: ["invalid_body"], 503: STORE}, body=True),
            }),
    }

    lnurl = ["Lightning addresses"]
    p["/.well-known/lnurlp/{username}"] = {"get": op(
        "lnurlpInfo", "LUD-06/16 pay request (wakes the wallet)", tags=lnurl, parameters=[USERNAME],
        responses={"200": lnurl_ok("LnurlPayInfo", "pay request"), **lnurl_errors()})}
    p["/lnurlp/{username}/callback"] = {"get": op(
        "lnurlpCallback", "LUD-06 invoice for an amount (wakes the wallet)", tags=lnurl,
        parameters=[USERNAME,
                    query_param("amount", "Millisatoshis, within the pay request's limits.",
                                {"type": "integer", "minimum": 1}, required=True),
                    query_param("comment", "LUD-12, up to commentAllowed characters.", {"type": "string"}),
                    query_param("nostr", "NIP-57 zap request (kind 9734 event, JSON): checked as NIP-57 Appendix D "
                                "asks; the invoice then commits to it.", {"type": "string"}),
                    query_param("lnurl", "NIP-57: the address's LNURL (ignored: the zap request's lnurl tag is "
                                "what is checked).", {"type": "string"})],
        responses={"200": lnurl_ok("LnurlPayInvoice", "invoice"), **lnurl_errors(extra_400=True)})}
    p["/lnurlp/{username}/verify/{payment_hash}"] = {"get": op(
        "lnurlpVerify", "LUD-21: has the invoice been paid? (wakes the wallet)", tags=lnurl,
        parameters=[USERNAME, PAYMENT_HASH],
        responses={"200": lnurl_ok("LnurlPayVerification", "verification"), **lnurl_errors(extra_400=True)})}

    p["/lnurlp/{username}/zap/{payment_hash}"] = {"post": op(
        "zapPaid", "The device reports a zap's invoice paid: the zap receipt is published (NIP-57)", tags=lnurl,
        description="The `zap_url` of a `lnurlpay_invoice` push carrying `nostr`. The preimage proves the payment; "
                    "the receipt goes to every relay of the zap request through the outbox, once however often "
                    "it is reported.",
        parameters=[USERNAME, PAYMENT_HASH],
        body=request_body(ref("ZapPaymentReport")),
        responses={
            "202": json_body(ref("ZapPaymentAnswer"), "The receipt's publication jobs (none new for a repeat)."),
            **errors({400: ["invalid_json", "invalid_preimage"], 404: ["not_found", "unknown_zap"],
                      413: ["body_too_large"], 422: ["invalid_body"], 503: INTAKE}, body=True),
        })}

    backend = ["Wallet backends"]
    session_400 = ["invalid_json", "invalid_user_id", "invalid_session_id", "unknown_platform", "invalid_token",
                   "invalid_subscription", "private_endpoint", "unresolvable_endpoint", "platform_not_configured", "invalid_seal_key",
                   "unknown_app"]
    p["/api/v1/users/{user_id}/sessions"] = {"get": op(
        "listSessions", "The user's sessions and their token status", tags=backend, security=api_key("sessions"),
        parameters=[USER_ID],
        responses={"200": json_body(ref("SessionList"), "The sessions."),
                   **errors({400: ["invalid_user_id"], 401: ["unauthorized"], 403: ["forbidden"], 503: STORE},
                            body=False)})}
    p["/api/v1/users/{user_id}/sessions/{session_id}"] = {
        "put": op(
            "putSession", "Create or replace a login's session (the login hook)", tags=backend,
            security=api_key("sessions"), parameters=[USER_ID, SESSION_ID], body=request_body(ref("SessionPut")),
            responses={
                "200": json_body(ref("Session"), "Replaced."),
                "201": json_body(ref("Session"), "Created."),
                **errors({400: session_400, 401: ["unauthorized"], 403: ["forbidden"], 404: ["session_not_found"],
                          413: ["body_too_large"], 422: ["invalid_body", "push_token_required"], 503: STORE},
                         body=True),
            }),
        "patch": op(
            "patchSession", "Change the fields sent (a refreshed token, notifications on or off)", tags=backend,
            security=api_key("sessions"), parameters=[USER_ID, SESSION_ID], body=request_body(ref("SessionPatch")),
            responses={
                "200": json_body(ref("Session"), "Changed."),
                **errors({400: session_400, 401: ["unauthorized"], 403: ["forbidden"], 404: ["session_not_found"],
                          413: ["body_too_large"], 422: ["invalid_body", "push_token_required"], 503: STORE},
                         body=True),
            }),
        "delete": op(
            "deleteSession", "Logout: remove the session (204 also when already gone)", tags=backend,
            security=api_key("sessions"), parameters=[USER_ID, SESSION_ID],
            responses={"204": NO_CONTENT,
                       **errors({400: ["invalid_user_id", "invalid_session_id"], 401: ["unauthorized"],
                                 403: ["forbidden"], 503: STORE}, body=False)}),
    }
    event_errors = {400: ["invalid_json", "invalid_user_id"], 401: ["unauthorized"], 403: ["forbidden"],
                    413: ["body_too_large"], 422: ["invalid_body", "invalid_data", *PUSH_422],
                    429: ["target_rate_limited"], 503: INTAKE}
    p["/api/v1/users/{user_id}/events"] = {"post": op(
        "userEvent", "Push an event to every live session of the user", tags=backend, security=api_key("events"),
        parameters=[USER_ID, IDEMPOTENCY], body=request_body(ref("BackendEvent")),
        responses={"200": json_body(ref("EventResult"), "One job per targeted session.", REPLAYED),
                   **errors({**event_errors, 400: [*event_errors[400], "invalid_idempotency_key"],
                             422: [*event_errors[422], "idempotency_key_reused"]}, body=True)})}
    p["/api/v1/users/{user_id}/welcome"] = {"post": op(
        "userWelcome", "Send the onboarding push, once per user", tags=backend, security=api_key("events"),
        parameters=[USER_ID], body=request_body(ref("Welcome"), required=False),
        responses={"200": json_body(ref("WelcomeResult"), "Sent now, or why not."),
                   **errors(event_errors, body=True)})}

    admin = ["Administration"]
    admin_auth = {401: ["unauthorized"], 403: ["forbidden"]}
    filter_400 = ["invalid_reason", "unknown_platform"]
    p["/api/v1/admin/dead-letters"] = {
        "get": op(
            "listDeadLetters", "Dead letters not yet replayed, newest first", tags=admin, security=api_key("admin"),
            parameters=[*DEAD_LETTER_FILTERS,
                        query_param("limit", "1 to 500, default 50.", {"type": "integer", "minimum": 1, "maximum": 500}),
                        query_param("cursor", "The `next_cursor` of the previous page.", {"type": "string"})],
            responses={"200": json_body(ref("DeadLetterList"), "A page of dead letters."),
                       **errors({400: [*filter_400, "invalid_limit", "invalid_cursor"], **admin_auth, 503: STORE},
                                body=False)}),
        "delete": op(
            "purgeDeadLetters", "Delete every dead letter matching the filters (all of them without)", tags=admin,
            security=api_key("admin"), parameters=DEAD_LETTER_FILTERS,
            responses={"200": json_body(ref("Purge"), "How many were deleted (replayed ones included)."),
                       **errors({400: filter_400, **admin_auth, 503: STORE}, body=False)}),
    }
    p["/api/v1/admin/dead-letters/replay"] = {"post": op(
        "replayDeadLetters", "Enqueue every matching dead letter again as a new job", tags=admin,
        security=api_key("admin"),
        description="Letters replayed before are not replayed again; letters whose token is dead are skipped "
                    "and counted.",
        parameters=[*DEAD_LETTER_FILTERS,
                    query_param("limit", "1 to 10000, default 1000.", {"type": "integer", "minimum": 1, "maximum": 10000})],
        responses={"200": json_body(ref("BulkReplay"), "The new jobs."),
                   **errors({400: [*filter_400, "invalid_limit"], **admin_auth, 503: STORE}, body=False)})}
    p["/api/v1/admin/dead-letters/{id}/replay"] = {"post": op(
        "replayDeadLetter", "Enqueue one dead letter again as a new job, once", tags=admin, security=api_key("admin"),
        parameters=[DEAD_LETTER_ID],
        responses={"201": json_body(ref("Replay"), "Replayed now."),
                   "200": json_body(ref("Replay"), "Replayed before: the job that replay made; nothing new."),
                   **errors({**admin_auth, 404: ["dead_letter_not_found"], 409: ["token_dead"], 503: STORE},
                            body=False)})}
    p["/api/v1/admin/dead-letters/{id}"] = {"delete": op(
        "purgeDeadLetter", "Delete one dead letter", tags=admin, security=api_key("admin"), parameters=[DEAD_LETTER_ID],
        responses={"204": NO_CONTENT,
                   **errors({**admin_auth, 404: ["dead_letter_not_found"], 503: STORE}, body=False)})}
    p["/api/v1/admin/outbox"] = {"get": op(
        "outbox", "The outbox: pending, leased and retrying jobs, by platform, and the oldest due time", tags=admin,
        security=api_key("admin"),
        responses={"200": json_body(ref("Outbox"), "The counts now."),
                   **errors({**admin_auth, 503: STORE}, body=False)})}

    html = {"description": "An HTML page.", "content": {"text/html": {"schema": {"type": "string"}}}}
    see_other = {"description": "Done: back to the dashboard.",
                 "headers": LOCATION}
    form = shared("requestBodies", "DashboardForm", {
        "required": False, "content": {"application/x-www-form-urlencoded": {"schema": {
            "type": "object", "properties": {"csrf": {"type": "string"}}}}}})
    see_other_back = shared("responses", "DashboardBack", see_other)
    no_session = shared("responses", "DashboardNoSession", {**html, "description": "No live session."})
    bad_csrf = shared("responses", "DashboardBadCsrf", {**html, "description": "The CSRF token is missing or wrong."})
    dashboard = ["Dashboard"]
    p["/admin"] = {"get": op(
        "dashboard", "The dashboard, or its log-in form without a session", tags=dashboard,
        description="Server-rendered HTML. The session is the `herald_admin` cookie set by `/admin/login`.",
        responses={"200": html, **errors({503: STORE}, body=False)})}
    p["/admin/login"] = {"post": op(
        "dashboardLogin", "Log in with an admin API key (form field `key`)", tags=dashboard,
        body={"required": False, "content": {"application/x-www-form-urlencoded": {"schema": {
            "type": "object", "properties": {"key": {"type": "string"}}}}}},
        responses={"303": {**see_other, "headers": {**see_other["headers"], "Set-Cookie": {
                       "description": "`herald_admin=…; Path=/admin; HttpOnly; SameSite=Strict` (and `Secure` "
                                      "behind an https public URL).", "schema": {"type": "string"}}}},
                   "401": {**html, "description": "Unknown or revoked key: the form again."},
                   "403": {**html, "description": "The key lacks the admin scope: the form again."},
                   **errors({413: ["body_too_large"], 503: STORE}, body=True)})}
    p["/admin/logout"] = {"post": op(
        "dashboardLogout", "End the session (form field `csrf`)", tags=dashboard, body=form,
        responses={"303": see_other_back, "401": no_session, "403": bad_csrf,
                   **errors({413: ["body_too_large"], 503: STORE}, body=True)})}
    p["/admin/dead-letters/{id}/replay"] = {"post": op(
        "dashboardReplay", "The dashboard's Replay button (form field `csrf`)", tags=dashboard,
        parameters=[DEAD_LETTER_ID], body=form,
        responses={"303": see_other_back, "401": no_session, "403": bad_csrf,
                   **errors({413: ["body_too_large"], 503: STORE}, body=True)})}

    ops = ["Operations"]
    p["/health"] = {"get": op(
        "health", "Liveness and the database", tags=ops,
        responses={"200": json_body(ref("Health"), "Healthy."),
                   "503": json_body({"oneOf": [ref("Health"), narrowed("Error", ["too_many_connections"])]},
                       "The database is unavailable (`status: degraded`), or the connection cap was reached.",
                       RETRY_AFTER)})}
    p["/metrics"] = {"get": op(
        "metrics", "Prometheus metrics", tags=ops,
        responses={"200": {"description": "Prometheus text format 0.0.4.",
                           "content": {"text/plain": {"schema": {"type": "string"}}}},
                   **errors({}, body=False)})}
    p["/openapi.json"] = {"get": op(
        "openapiJSON", "This document", tags=ops,
        responses={"200": {"description": "OpenAPI 3.1, JSON.", "content": {JSON: {"schema": {"type": "object"}}}},
                   **errors({}, body=False)})}
    p["/openapi.yaml"] = {"get": op(
        "openapiYAML", "This document, as YAML", tags=ops,
        responses={"200": {"description": "OpenAPI 3.1, YAML.",
                           "content": {"application/yaml": {"schema": {"type": "object"}}}},
                   **errors({}, body=False)})}
    return p


def codes_in(value, under_error: bool = False) -> list[str]:
    """The codes of every `enum` under an `error` property, in order."""
    if isinstance(value, dict):
        found = []
        for key, inner in value.items():
            if key == "enum" and under_error:
                found += inner
            found += codes_in(inner, key == "error" or (under_error and key != "properties"))
        return found
    if isinstance(value, list):
        return [code for inner in value for code in codes_in(inner, under_error)]
    return []


def shared_responses(p: dict) -> dict[str, dict]:
    """Moves every error response two or more operations share into `components/responses`,
    named for its status and codes, and refers to it from each."""
    def each():
        for item in p.values():
            for operation in item.values():
                for status, response in operation["responses"].items():
                    if int(status) >= 400 and "$ref" not in response:
                        yield operation["responses"], status, response

    seen: dict[str, int] = {}
    for _, _, response in each():
        key = json.dumps(response, sort_keys=True)
        seen[key] = seen.get(key, 0) + 1
    names: dict[str, str] = {}
    out: dict[str, dict] = {}
    for responses, status, response in each():
        key = json.dumps(response, sort_keys=True)
        if seen[key] < 2:
            continue
        if key not in names:
            lnurl = "Lnurl" if "LnurlFailure" in key else ""
            name = ".".join([f"{lnurl}Error{status}", *dict.fromkeys(codes_in(response))])
            while name in out:  # the same codes, said differently (descriptions, headers)
                name += "_"
            names[key], out[name] = name, response
        responses[status] = {"$ref": f"#/components/responses/{names[key]}"}
    return dict(sorted(out.items()))


def document() -> dict:
    all_paths = paths()
    responses = shared_responses(all_paths)
    assert not responses.keys() & SHARED["responses"].keys()
    responses = {**SHARED["responses"], **responses}
    documented = {code for response in responses.values() for code in codes_in(response)}
    documented |= set(codes_in(all_paths))
    missing = [code for code in CODES if code not in documented]
    assert not missing, f"ErrorCode cases no operation documents: {missing}"
    assert not SCHEMAS.keys() & SHARED["schemas"].keys()
    schemas = {**SCHEMAS, **SHARED["schemas"]}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Herald Notification Delivery Service",
            "version": "1",
            "description": "Push delivery for Lightning wallets: the Breez-compatible webhook, device "
                           "registration, presence and wakes for LSPs, Lightning addresses, and the wallet-backend "
                           "API. Every error of Herald's own API is `{\"error\": \"<code>\", \"message\": \"…\"}` "
                           "with the codes listed per response; the Lightning-address routes answer failures in "
                           "the LNURL shape `{\"status\": \"ERROR\", \"reason\": \"…\"}`. Any route can answer "
                           "`404 not_found` for a path that does not exist.",
            "license": {"name": "See the repository"},
        },
        "tags": [{"name": name} for name in ["Webhook", "Devices", "Presence", "Wake", "Wake gateway", "NWC", "Lightning addresses",
                                              "Wallet backends", "Administration", "Dashboard", "Operations"]],
        "paths": all_paths,
        "components": {
            "schemas": schemas,
            "responses": responses,
            "parameters": SHARED["parameters"],
            "headers": SHARED["headers"],
            "requestBodies": SHARED["requestBodies"],
            "securitySchemes": {
                "apiKey": {"type": "http", "scheme": "bearer", "bearerFormat": "hk_…",
                           "description": "An API key from `herald keys create --scopes …`. The scopes an "
                                          "operation lists are the ones it needs; `admin` allows everything. "
                                          "Missing, unknown or revoked: `401 unauthorized`; without the scope: "
                                          "`403 forbidden`."},
                "wakeDeviceSecret": {"type": "http", "scheme": "bearer", "bearerFormat": "wkd_…",
                                     "description": "The `wkd_` secret a wake gateway device registered the "
                                                    "SHA-256 of. Unknown or revoked: `401 unauthorized`."},
                "deviceSecret": {"type": "http", "scheme": "bearer",
                                 "description": "The `device_secret` from registration. A wrong id and a wrong "
                                                "secret both answer `401 unauthorized`."},
            },
        },
    }


# ---------------------------------------------------------------------------------------------
# Output


WIDTH = 120
MAX_LINES = 5000  # issue #53: what repeats is shared, so the document stays readable whole


def to_json(doc: dict) -> str:
    """JSON indented by two, except that a short array or object (scalars, or arrays and objects
    of scalars: `"required": ["a", "b"]`, `"schema": {"$ref": "…"}`, `"security": [{"apiKey":
    ["admin"]}]`) stays on its line when the line fits in `WIDTH` columns: the same document, in
    fewer lines."""
    def depth(value) -> int:  # a scalar, `[]` or `{}` 0, `[1]` 1, `{"a": [1]}` 2
        if isinstance(value, dict):
            value = list(value.values())
        return 1 + max(map(depth, value)) if isinstance(value, list) and value else 0

    def write(value, indent: int, used: int) -> str:
        if not isinstance(value, (dict, list)) or not value:
            return json.dumps(value, ensure_ascii=False)
        one_line = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        if depth(value) <= 2 and used + len(one_line) + 1 <= WIDTH:
            return one_line
        inner = "  " * (indent + 1)
        if isinstance(value, dict):
            members = []
            for key, member in value.items():
                name = json.dumps(key, ensure_ascii=False) + ": "
                members.append(inner + name + write(member, indent + 1, len(inner) + len(name)))
            return "{\n" + ",\n".join(members) + "\n" + "  " * indent + "}"
        members = [inner + write(member, indent + 1, len(inner)) for member in value]
        return "[\n" + ",\n".join(members) + "\n" + "  " * indent + "]"

    text = write(doc, 0, 0) + "\n"
    assert json.loads(text) == doc
    return text


def outputs() -> dict[Path, str]:
    return {SWIFT_PATH: to_swift(to_json(document()))}


def to_swift(json_text: str) -> str:
    """The document as a Swift string literal, compiled into the server: a `herald` binary
    copied anywhere serves it, with no resource bundle to lose beside it. The one committed copy;
    the server renders `/openapi.yaml` from it."""
    assert '"""##' not in json_text
    return (
        "// Generated by scripts/openapi.py from its description of the API: do not edit.\n"
        "// swift-format-ignore-file\n\n"
        "/// The OpenAPI 3.1 document, served at `/openapi.json` (and rendered as `/openapi.yaml`).\n"
        "enum OpenAPIDocument {\n"
        # The line break before a closing delimiter is not part of the string: one more keeps the
        # document's own final newline, so the served bytes are `to_json`'s.
        f'    static let json = ##"""\n{json_text}\n"""##\n'
        "}\n"
    )


def check() -> int:
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation import OpenAPIV31SpecValidator

    failures = 0
    for path, text in outputs().items():
        if not path.is_file() or path.read_text() != text:
            print(f"FAIL  {path.relative_to(ROOT)} is stale: run python3 scripts/openapi.py")
            failures += 1
    lines = to_json(document()).count("\n")
    if lines > MAX_LINES:
        print(f"FAIL  the document is {lines} lines, over {MAX_LINES}: share what repeats in `components`")
        failures += 1
    else:
        print(f"PASS  the document is {lines} lines (at most {MAX_LINES})")
    try:
        validate(document(), cls=OpenAPIV31SpecValidator)
        print("PASS  the document is valid OpenAPI 3.1 (openapi-spec-validator)")
    except Exception as error:  # the validator's own error types vary between versions
        print(f"FAIL  the document is not valid OpenAPI 3.1: {error}")
        failures += 1
    print(f"{'OK' if failures == 0 else f'{failures} failed'}")
    return 0 if failures == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="fail if the files are stale or the document invalid")
    args = parser.parse_args()
    if args.check:
        return check()
    for path, text in outputs().items():
        path.write_text(text)
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
