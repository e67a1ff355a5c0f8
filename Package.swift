// swift-tools-version:6.2
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    // Warnings are errors in our own targets: among them "no 'async' operations occur within
    // 'await' expression", the sign of a blocking overload called from async code (how the
    // server once hung), which has no diagnostic group of its own to raise alone.
    .treatAllWarnings(as: .error),
]
// Not for tests: Swift Testing's macro expansions warn on this toolchain.
let testSwiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "herald",
    // macOS 15: swift-configuration's floor (server side only; the device plugin stays on iOS 17).
    platforms: [.macOS(.v15), .iOS(.v17)],
    products: [
        .library(name: "HeraldWire", targets: ["HeraldWire"]),
        .library(name: "HeraldDevice", targets: ["HeraldDevice"]),
        .library(name: "HeraldLSPS5", targets: ["HeraldLSPS5"]),
        .library(name: "HeraldSecp256k1", targets: ["HeraldSecp256k1"]),
        .library(name: "HeraldWake", targets: ["HeraldWake"]),
        .executable(name: "herald", targets: ["herald"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: ["FullFoundation"]),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        // The configuration file is parsed once, with it (`ConfigurationFile`): its values go to
        // swift-configuration's reader, its tree names the apps and topics no fixed list can name.
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
    ],
    targets: [
        // Every wire format. Portable: Foundation, and swift-crypto for the sealed-payload envelope (HPKE).
        .target(
            name: "HeraldWire",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // libsecp256k1 from the system (Debian's libsecp256k1-dev), for LSPS5's node signatures.
        .systemLibrary(
            name: "CSecp256k1",
            pkgConfig: "libsecp256k1",
            providers: [.apt(["libsecp256k1-dev"]), .brew(["secp256k1"])]
        ),
        // secp256k1 for everything that needs it: node keys, Lightning signed messages (zbase32),
        // recoverable signatures, ECDH, and the identity proofs built on them (`ln:`, `pk:`).
        // Apart from HeraldWire so the device plugin never links libsecp256k1.
        .target(
            name: "HeraldSecp256k1",
            dependencies: ["HeraldWire", "CSecp256k1", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Bitkit's wake gateway protocol (bitkit-core `wake`, the gateway's `wake-proto`): sealing
        // and opening wake envelopes, registrations and their preimage, the push requests byte
        // for byte. The server sends with it; a device (herald-device) opens with it.
        .target(
            name: "HeraldWake",
            dependencies: ["HeraldWire", "HeraldSecp256k1", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // LSPS5 (bLIP-55) webhooks: signing and checking a notification.
        .target(
            name: "HeraldLSPS5",
            dependencies: ["HeraldWire", "HeraldSecp256k1", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Bech32 (BIP-173) alone, with no dependency: BOLT11 writes invoices in it, Nostr its
        // LNURLs and `nsec` keys, and neither need link the other for it.
        .target(name: "HeraldBech32", swiftSettings: swiftSettings),
        // BOLT11 invoices: tagged fields, amounts, signing with a node key (HeraldSecp256k1's keys
        // and recoverable signatures). Apart from HeraldDevice so the plugin never links libsecp256k1,
        // and free of it so the server, which reads invoices for zaps, never links the plugin
        // (and through its URLSession, libcurl).
        .target(
            name: "HeraldBolt11",
            dependencies: ["HeraldBech32", "HeraldSecp256k1", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // BOLT 12 offers, read and checked before Herald publishes one (BIP-353): bech32 groups
        // without a checksum, and HeraldSecp256k1 to check that each key is a point on the curve.
        .target(name: "HeraldBolt12", dependencies: ["HeraldBech32", "HeraldSecp256k1"], swiftSettings: swiftSettings),
        // The development wallet and the issuer that gives it real regtest BOLT11 invoices: what
        // `herald-device` and the tests use in a real wallet's place, kept out of HeraldDevice so
        // the plugin an app links carries neither.
        .target(
            name: "HeraldDevelopmentInvoices",
            dependencies: [
                "HeraldBolt11", "HeraldDevice", "HeraldSecp256k1", "HeraldWire", .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Nostr for the Lightning address's zaps (NIP-57) and Nostr Wallet Connect (NIP-47): events,
        // BIP-340 keys, zap requests and receipts, NWC's kinds and subscription filters.
        .target(
            name: "HeraldNostr",
            dependencies: [
                "HeraldWire", "HeraldSecp256k1", "HeraldBech32", "CSecp256k1", .product(name: "Crypto", package: "swift-crypto"),
                // NIP-44's ChaCha20 (NIP-47 requests and responses).
                .product(name: "CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Talking to APNs, FCM, Web Push services and the local development provider, directly or
        // through an HTTPS proxy.
        .target(
            name: "HeraldPush",
            dependencies: [
                // Provider tokens shared through the store by every process on one database.
                "HeraldStore", "HeraldWire",
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // Publishing zap receipts to Nostr relays.
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: swiftSettings
        ),
        // Durable state, the contract: the store protocols, their records and errors, which
        // every back end implements and the server is written against.
        .target(
            name: "HeraldStore",
            dependencies: [
                "HeraldWire",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // Where async work runs: on an event loop while it is idle, on Swift's pool under load.
        .target(
            name: "HeraldExecutors",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The embedded default back end: one SQLite file through GRDB, one `serve` per file.
        .target(
            name: "HeraldSQLite",
            dependencies: [
                "HeraldStore", "HeraldWire", "HeraldExecutors",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // The same store protocols on PostgreSQL, for several `herald serve` on one database.
        .target(
            name: "HeraldPostgres",
            dependencies: [
                "HeraldStore", "HeraldWire",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The Hummingbird application, the outbox dispatcher, metrics.
        .target(
            name: "HeraldServer",
            dependencies: [
                // Zaps on the Lightning address: Nostr events, and BOLT11 to check the invoice.
                "HeraldNostr", "HeraldBolt11",
                // BIP-353: offers checked before they are published, records written by DNS UPDATE.
                "HeraldBolt12", "HeraldDNS",
                "HeraldWire", "HeraldPush", "HeraldStore", "HeraldLSPS5", "HeraldSecp256k1", "HeraldWake", "HeraldExecutors",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Yams", package: "Yams"),
            ],
            swiftSettings: swiftSettings
        ),
        // The device plugin: runs inside an iOS Notification Service Extension or Android service.
        .target(
            name: "HeraldDevice",
            dependencies: ["HeraldWire", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Apple-only glue over HeraldDevice; its sources compile to nothing where UserNotifications is missing.
        .target(name: "HeraldExtension", dependencies: ["HeraldDevice"], swiftSettings: swiftSettings),
        // What an extension would carry: the plugin, run on one push or against a local NDS, with
        // a development wallet that signs real BOLT11 invoices through HeraldBolt11 (where a real
        // app would bring its Lightning SDK).
        .executableTarget(
            name: "herald-device",
            dependencies: [
                "HeraldDevice", "HeraldBolt11", "HeraldDevelopmentInvoices", "HeraldSecp256k1", "HeraldWake",
                // The development wallet's NWC service: NIP-44, events, and publishing its answers to relays.
                "HeraldNostr", "HeraldPush", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "herald",
            dependencies: [
                "HeraldServer", "HeraldPush", "HeraldStore", "HeraldSQLite", "HeraldPostgres", "HeraldWire", "HeraldNostr",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // RFC 2136 UPDATE with RFC 8945 TSIG over TCP, for BIP-353's TXT records: the messages,
        // BIND key files, and a client that reads back what it published.
        .target(
            name: "HeraldDNS",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
            ],
            swiftSettings: swiftSettings
        ),
        // Local look-alikes of APNs, Google's OAuth token endpoint and FCM, for tests and the bench.
        .target(
            name: "HeraldTestSupport",
            dependencies: [
                // KnotServer waits for its zone to be signed by asking it, with HeraldDNS's queries.
                "HeraldDNS",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdHTTP2", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: swiftSettings
        ),
        // `herald-bench`: throughput and latency of webhook → APNs on this machine.
        .executableTarget(
            name: "herald-bench",
            dependencies: [
                "HeraldServer", "HeraldPush", "HeraldStore", "HeraldSQLite", "HeraldWire", "HeraldTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/HeraldBench",
            swiftSettings: swiftSettings
        ),
        // `herald-instructions`: `herald serve`'s application behind a synchronous main, for
        // callgrind (Benchmarks/instructions.py).
        .executableTarget(
            name: "herald-instructions",
            dependencies: [
                "HeraldServer", "HeraldPush", "HeraldSQLite",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/Instructions",
            swiftSettings: swiftSettings
        ),
        // The sender's retry policy lives beside the simulated LSP that uses it.
        .testTarget(name: "HeraldBenchTests", dependencies: ["herald-bench", "HeraldWire"], swiftSettings: swiftSettings),
        .testTarget(
            name: "HeraldWireTests",
            dependencies: ["HeraldWire", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldWakeTests",
            dependencies: ["HeraldWake", "HeraldSecp256k1", "HeraldWire", .product(name: "Crypto", package: "swift-crypto")],
            resources: [.copy("Vectors")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldSecp256k1Tests",
            dependencies: ["HeraldSecp256k1", "HeraldWire"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldLSPS5Tests",
            dependencies: ["HeraldLSPS5", "HeraldSecp256k1", "HeraldWire"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(name: "HeraldBech32Tests", dependencies: ["HeraldBech32"], swiftSettings: testSwiftSettings),
        // Byte-for-byte encoding, and UPDATEs against a real Knot DNS server (KnotServer).
        .testTarget(
            name: "HeraldDNSTests",
            dependencies: ["HeraldDNS", "HeraldTestSupport"],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldNostrTests",
            dependencies: ["HeraldNostr", "HeraldBech32", "HeraldWire"],
            resources: [.copy("bip340-test-vectors.csv"), .copy("nip44.vectors.json")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldBolt11Tests",
            dependencies: [
                "HeraldBolt11", "HeraldBech32", "HeraldDevelopmentInvoices", "HeraldSecp256k1", "HeraldDevice",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldBolt12Tests",
            dependencies: ["HeraldBolt12", "HeraldSecp256k1", "HeraldWire"],
            resources: [.copy("offers-test.json"), .copy("format-string-test.json")],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldPushTests",
            dependencies: [
                "HeraldPush", "HeraldTestSupport", "HeraldWire", "HeraldNostr",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
            ],
            swiftSettings: testSwiftSettings
        ),
        // One suite over both back ends: SQLite, and PostgreSQL on a throwaway server.
        .testTarget(
            name: "HeraldStoreTests",
            dependencies: [
                "HeraldStore", "HeraldSQLite", "HeraldPostgres", "HeraldTestSupport", "HeraldWire",
                .product(name: "Logging", package: "swift-log"),
                // A second connection to a store's database: to make one of its writes fail (a
                // trigger) and to read the rows as they are.
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: testSwiftSettings
        ),
        .testTarget(
            name: "HeraldServerTests",
            dependencies: [
                "HeraldServer", "HeraldSQLite", "HeraldTestSupport", "HeraldWire", "HeraldExecutors",
                // The LSPS5 tests sign notifications as an LSP would; identity proofs sign with node keys;
                // the wake gateway tests register and open wakes as a bitkit-core app would.
                "HeraldLSPS5", "HeraldSecp256k1", "HeraldWake",
                // The wake tests hand pushes, exactly as the APNs look-alike got them, to the plugin.
                "HeraldDevice",
                // The development wallet and its invoice issuer.
                "HeraldBolt11", "HeraldDevelopmentInvoices",
                // Zap requests signed as a Nostr client would.
                "HeraldNostr",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // A second connection to the server's database file: to make the store fail or stall for real.
                .product(name: "GRDB", package: "GRDB.swift"),
                // The device's side of a sealed push: its X25519 key.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: testSwiftSettings
        ),
        // `herald serve` in a child process under hostile traffic: fuzzing, concurrency, `kill -9`.
        // Depends on `herald` so the binary is built beside the tests.
        .testTarget(
            name: "HostileTrafficTests",
            dependencies: [
                "herald",
                // `herald serve` on PostgreSQL: a throwaway server, and the store to read its rows.
                "HeraldTestSupport", "HeraldPostgres", "HeraldStore", "HeraldSQLite",
                // A bitkit-core phone registering with the wake gateway and opening its wakes.
                "HeraldWake", "HeraldSecp256k1", "HeraldWire", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            swiftSettings: testSwiftSettings
        ),
        // Depends on `herald-device` so the binary is built for the two-process coordination test,
        // and on `herald` for the presence tests against a real `herald serve`.
        .testTarget(
            name: "HeraldDeviceTests",
            dependencies: [
                "HeraldDevice", "HeraldWire", "HeraldTestSupport", "herald-device", "herald", "HeraldBolt11", "HeraldDevelopmentInvoices",
                "HeraldSecp256k1", "HeraldNostr", "HeraldWake",
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: testSwiftSettings
        ),
    ]
)
