import Foundation
import HeraldNostr
import HeraldPush
import HeraldServer
import HeraldTestSupport
import Logging
import Testing

/// One configuration: flags over `HERALD_*` variables over the YAML file over defaults, one list
/// of settings, and a table in docs/configuration.md that matches it.
@Suite("Configuration")
struct HeraldConfigurationTests {
    static func yaml(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(UUID().uuidString).yaml")
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test("a default is one number: the code's, the configuration's and the settings table's agree")
    func defaultsAgree() async throws {
        let unset = try await HeraldConfiguration.load(flags: [:], environment: [:], file: nil)
        let code = (dispatcher: DispatcherConfiguration(), intake: IntakeConfiguration(), edge: EdgeLimits())
        #expect(unset.server.dispatcher.lease == code.dispatcher.lease)
        #expect(unset.server.dispatcher.lease == .seconds(60))
        #expect(unset.server.dispatcher.maxConcurrentSends == code.dispatcher.maxConcurrentSends)
        #expect(unset.server.intake.maxPending == code.intake.maxPending)
        #expect(unset.server.edge.maxConnections == code.edge.maxConnections)
        func table(_ key: String) -> String? { HeraldConfiguration.settings.first { $0.key == key }?.defaultValue }
        #expect(table("lease_seconds") == String(code.dispatcher.lease.components.seconds))
        #expect(table("max_concurrent_sends") == String(code.dispatcher.maxConcurrentSends))
        #expect(table("job_ttl") == String(unset.server.settings.jobTTL.components.seconds))
        #expect(table("idle_timeout") == String(code.edge.idleTimeout.components.seconds))
    }

    @Test("a flag wins over its variable, the variable over the file, the file over the default")
    func layering() async throws {
        let file = try Self.yaml("port: 9000\njob_ttl: 120\npublic_url: https://push.example.com\n")
        let all = try await HeraldConfiguration.load(flags: ["port": "9200"], environment: ["HERALD_PORT": "9100"], file: file)
        #expect(all.server.port == 9200)
        #expect(all.server.settings.jobTTL == .seconds(120))
        #expect(all.server.settings.publicURL == "https://push.example.com")
        let noFlag = try await HeraldConfiguration.load(flags: [:], environment: ["HERALD_PORT": "9100"], file: file)
        #expect(noFlag.server.port == 9100)
        let fileOnly = try await HeraldConfiguration.load(flags: [:], environment: [:], file: file)
        #expect(fileOnly.server.port == 9000)
        let defaults = try await HeraldConfiguration.load(flags: [:], environment: ["UNRELATED": "1"], file: nil)
        #expect(defaults.server.port == 8080)
        #expect(defaults.database == "./herald.sqlite")
        #expect(defaults.server.settings.publicURL == "http://127.0.0.1:8080")
        #expect(defaults.providers.isLocal)
    }

    @Test("nested file keys are the HERALD_APNS_* credentials: APNs configured from the file alone")
    func credentialsFromFile() async throws {
        let key = TestKeys.apnsP8()
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString).p8")
        try key.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
        let file = try Self.yaml(
            """
            apns:
              key_file: \(keyFile.path)
              key_id: \(key.keyID)
              team_id: \(key.teamID)
              topic: com.example.wallet
              environment: sandbox
            """
        )
        let configuration = try await HeraldConfiguration.load(flags: [:], environment: [:], file: file)
        #expect(configuration.providers.apns?.topic == "com.example.wallet")
        #expect(configuration.providers.apns?.environment == .sandbox)
        #expect(configuration.providers.fcm == nil)
        #expect(!configuration.summary.contains { $0.1.contains("PRIVATE KEY") })
    }

    @Test("the file's apps section: each app with its own credentials beside the environment's default app")
    func apps() async throws {
        let wallet = TestKeys.apnsP8(keyID: "WALLETKEY1", teamID: "TEAMWALLET")
        let keyFile = FileManager.default.temporaryDirectory.appendingPathComponent("key-\(UUID().uuidString).p8")
        try wallet.privateKeyPEM.write(to: keyFile, atomically: true, encoding: .utf8)
        let file = try Self.yaml(
            """
            port: 9000
            apps:
              com.example.wallet:
                apns: { key_file: \(keyFile.path), key_id: WALLETKEY1, team_id: TEAMWALLET, topic: com.example.wallet }
              com.example.wallet.beta:
                apns: { key_file: \(keyFile.path), key_id: WALLETKEY1, team_id: TEAMWALLET, topic: com.example.wallet.beta, environment: sandbox }
            """
        )
        let environment = [
            "HERALD_APNS_KEY_FILE": keyFile.path, "HERALD_APNS_KEY_ID": "WALLETKEY1", "HERALD_APNS_TEAM_ID": "TEAMWALLET",
            "HERALD_APNS_TOPIC": "com.example.legacy",
        ]
        let configuration = try await HeraldConfiguration.load(flags: [:], environment: environment, file: file)
        #expect(configuration.server.port == 9000)
        #expect(Set(configuration.providers.apps.keys) == ["default", "com.example.wallet", "com.example.wallet.beta"])
        #expect(configuration.providers.apps["com.example.wallet.beta"]?.apns?.topic == "com.example.wallet.beta")
        #expect(configuration.providers.apps["com.example.wallet.beta"]?.apns?.environment == .sandbox)
        #expect(configuration.providers.apns?.topic == "com.example.legacy")
        #expect(!configuration.server.settings.localProvider)
        #expect(configuration.summary.contains { $0.0 == "app com.example.wallet" && $0.1.contains("topic com.example.wallet,") })
        #expect(!configuration.summary.contains { $0.1.contains("PRIVATE KEY") })

        // `default` declared in the file while the environment configures it too: refused.
        let twice = try Self.yaml(
            """
            apps:
              default:
                apns: { key_file: \(keyFile.path), key_id: WALLETKEY1, team_id: TEAMWALLET, topic: com.example.wallet }
            """
        )
        do {
            _ = try await HeraldConfiguration.load(flags: [:], environment: environment, file: twice)
            Issue.record("accepted default twice")
        } catch {
            #expect("\(error)".contains("app 'default' is configured twice"), "\(error)")
        }
    }

    @Test("GOOGLE_APPLICATION_CREDENTIALS is the default app's service account when Herald's own setting is set nowhere")
    func googleApplicationCredentials() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gac-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func accountFile(_ project: String) throws -> String {
            let file = folder.appendingPathComponent("\(project).json")
            try TestKeys.serviceAccount(tokenURI: "https://oauth2.googleapis.com/token", projectID: project).json
                .write(to: file)
            return file.path
        }
        let google = try accountFile("from-google")
        let fromGoogle = try await HeraldConfiguration.load(
            flags: [:], environment: ["GOOGLE_APPLICATION_CREDENTIALS": google], file: nil)
        #expect(fromGoogle.providers.fcm?.serviceAccount.projectID == "from-google")
        #expect(!fromGoogle.server.settings.localProvider)

        // Herald's own setting wins, from the environment or from the file.
        let own = try await HeraldConfiguration.load(
            flags: [:], environment: ["GOOGLE_APPLICATION_CREDENTIALS": google, "HERALD_FCM_SERVICE_ACCOUNT_FILE": try accountFile("own")],
            file: nil)
        #expect(own.providers.fcm?.serviceAccount.projectID == "own")
        let fromFile = try await HeraldConfiguration.load(
            flags: [:], environment: ["GOOGLE_APPLICATION_CREDENTIALS": google],
            file: try Self.yaml("fcm: { service_account_file: \(try accountFile("file")) }"))
        #expect(fromFile.providers.fcm?.serviceAccount.projectID == "file")

        // gcloud's user credentials there are no service account: refused, naming the variable.
        let user = folder.appendingPathComponent("user.json")
        try Data(#"{"type":"authorized_user","client_id":"x","refresh_token":"y"}"#.utf8).write(to: user)
        do {
            _ = try await HeraldConfiguration.load(flags: [:], environment: ["GOOGLE_APPLICATION_CREDENTIALS": user.path], file: nil)
            Issue.record("accepted user credentials as a service account")
        } catch {
            #expect("\(error)".contains("GOOGLE_APPLICATION_CREDENTIALS"), "\(error)")
        }
    }

    @Test("the proxy: HERALD_HTTPS_PROXY, else HTTPS_PROXY or https_proxy, with NO_PROXY; a bad one names its variable without its password")
    func proxy() async throws {
        let conventional = try await HeraldConfiguration.load(
            flags: [:], environment: ["https_proxy": "http://u:pw@proxy.corp:3128", "NO_PROXY": "push.corp"], file: nil)
        let proxy = try #require(conventional.providers.proxy)
        #expect(proxy.host == "proxy.corp" && proxy.port == 3128 && proxy.credentials == "u:pw")
        #expect(!proxy.applies(to: "push.corp"))
        #expect(conventional.summary.contains { $0.0 == "https proxy" && $0.1 == "http://…@proxy.corp:3128" })
        let own = try await HeraldConfiguration.load(
            flags: [:], environment: ["HTTPS_PROXY": "http://other:1", "HERALD_HTTPS_PROXY": "http://mine:2"], file: nil)
        #expect(own.providers.proxy?.host == "mine")
        #expect(try await HeraldConfiguration.load(flags: [:], environment: [:], file: nil).providers.proxy == nil)
        do {
            _ = try await HeraldConfiguration.load(flags: [:], environment: ["HTTPS_PROXY": "socks5://u:hunter2@p:1"], file: nil)
            Issue.record("accepted a socks proxy")
        } catch {
            #expect("\(error)".contains("HTTPS_PROXY"), "\(error)")
            #expect(!"\(error)".contains("hunter2"), "\(error)")
        }
    }

    @Test("Web Push: the VAPID key and contact go together and are checked at start; the policy flags are read")
    func webPush() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("vapid-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("vapid.pem")
        try Data(VAPIDSigner.makeKeyPEM().utf8).write(to: key)
        let configured = try await HeraldConfiguration.load(
            flags: ["webpush.allow_private_endpoints": "true"],
            environment: ["HERALD_WEBPUSH_VAPID_KEY_FILE": key.path, "HERALD_WEBPUSH_CONTACT": "mailto:ops@example.com"], file: nil)
        #expect(configured.providers.webPush?.contact == "mailto:ops@example.com")
        #expect(configured.server.settings.webPush.allowPrivateEndpoints)
        #expect(!configured.server.settings.webPush.allowInsecureEndpoints)
        // Adding Web Push to a development setup keeps iOS and Android on the local provider.
        #expect(configured.server.settings.localProvider && !configured.server.settings.localWebPush)
        #expect(configured.summary.contains { $0.1.hasPrefix("ios: local; android: local; webpush: Web Push") }, "\(configured.summary)")
        let client = try configured.providers.makeHTTPClient(logger: Logger(label: "test"))
        let router = try configured.providers.makeRouter(httpClient: client, recordLocal: { _ in }, logger: Logger(label: "test"))
        #expect(router.provider(for: .ios) is LocalDevelopmentProvider)
        #expect(router.provider(for: .webpush) is WebPushProvider)
        await client.shutdown()
        // A Web-Push-only deployment turns the local provider off; with nothing else, that is an error.
        let webOnly = try await HeraldConfiguration.load(
            flags: ["local_provider": "false"],
            environment: ["HERALD_WEBPUSH_VAPID_KEY_FILE": key.path, "HERALD_WEBPUSH_CONTACT": "mailto:ops@example.com"], file: nil)
        #expect(!webOnly.server.settings.localProvider)
        #expect(webOnly.summary.contains { $0.1.hasPrefix("ios: none; android: none; webpush: Web Push") }, "\(webOnly.summary)")
        do {
            _ = try await HeraldConfiguration.load(flags: [:], environment: ["HERALD_LOCAL_PROVIDER": "false"], file: nil)
            Issue.record("no provider at all was accepted")
        } catch {
            #expect("\(error)".contains("nothing could be delivered"), "\(error)")
        }
        // What was set, and where.
        #expect(configured.given.contains(.init(key: "webpush.contact", value: "mailto:ops@example.com", source: "HERALD_WEBPUSH_CONTACT")))
        #expect(configured.given.contains(.init(key: "webpush.allow_private_endpoints", value: "true", source: "--webpush-allow-private-endpoints")))
        for (environment, mentions) in [
            (["HERALD_WEBPUSH_VAPID_KEY_FILE": key.path], "HERALD_WEBPUSH_CONTACT"),
            (["HERALD_WEBPUSH_CONTACT": "mailto:a@b"], "HERALD_WEBPUSH_VAPID_KEY_FILE"),
            (["HERALD_WEBPUSH_VAPID_KEY_FILE": key.path, "HERALD_WEBPUSH_CONTACT": "ops@example.com"], "mailto:"),
            (["HERALD_WEBPUSH_VAPID_KEY_FILE": "/nonexistent.pem", "HERALD_WEBPUSH_CONTACT": "mailto:a@b"], "cannot read"),
            (["HERALD_WEBPUSH_CONCURRENCY_PER_ORIGIN": "0"], "HERALD_WEBPUSH_CONCURRENCY_PER_ORIGIN"),
        ] {
            do {
                _ = try await HeraldConfiguration.load(flags: [:], environment: environment, file: nil)
                Issue.record("accepted \(environment)")
            } catch {
                #expect("\(error)".contains(mentions), "\(error)")
            }
        }
    }

    @Test("webpush.navigate_url: an https URL, else public_url when that is https, else none and a warning; anything else stops the start")
    func webPushNavigateURL() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("navigate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let key = folder.appendingPathComponent("vapid.pem")
        try Data(VAPIDSigner.makeKeyPEM().utf8).write(to: key)
        let webPush = ["HERALD_WEBPUSH_VAPID_KEY_FILE": key.path, "HERALD_WEBPUSH_CONTACT": "mailto:ops@example.com"]
        let set = try await HeraldConfiguration.load(
            flags: ["webpush.navigate_url": "https://wallet.example/open"], environment: webPush, file: nil)
        #expect(set.providers.webPushNavigateURL == "https://wallet.example/open")
        #expect(set.warnings.isEmpty, "\(set.warnings)")
        #expect(set.given.contains(.init(key: "webpush.navigate_url", value: "https://wallet.example/open", source: "--webpush-navigate-url")))
        let client = try set.providers.makeHTTPClient(logger: Logger(label: "test"))
        let router = try set.providers.makeRouter(httpClient: client, logger: Logger(label: "test"))
        #expect((router.provider(for: .webpush) as? WebPushProvider)?.navigateURL == "https://wallet.example/open")
        await client.shutdown()

        let file = try Self.yaml("public_url: https://push.example.com/\n")
        let fromPublicURL = try await HeraldConfiguration.load(flags: [:], environment: webPush, file: file)
        #expect(fromPublicURL.providers.webPushNavigateURL == "https://push.example.com")
        #expect(fromPublicURL.warnings.isEmpty, "\(fromPublicURL.warnings)")

        // The default public_url is http: declarative subscriptions get the plain form, and the operator hears why.
        let none = try await HeraldConfiguration.load(flags: [:], environment: webPush, file: nil)
        #expect(none.providers.webPushNavigateURL == nil)
        #expect(none.warnings.contains { $0.contains("set webpush.navigate_url") }, "\(none.warnings)")
        // Without Web Push there is nothing to warn about.
        #expect(try await HeraldConfiguration.load(flags: [:], environment: [:], file: nil).warnings.isEmpty)

        for bad in ["http://wallet.example", "wallet.example/open", "https://", "https://user:pw@wallet.example"] {
            do {
                _ = try await HeraldConfiguration.load(
                    flags: [:], environment: webPush.merging(["HERALD_WEBPUSH_NAVIGATE_URL": bad]) { $1 }, file: nil)
                Issue.record("accepted \(bad)")
            } catch {
                #expect("\(error)".contains("HERALD_WEBPUSH_NAVIGATE_URL must be an https URL"), "\(error)")
            }
        }
    }

    @Test("zaps: the Nostr key file (hex or nsec) turns them on and is checked at start without being shown")
    func nostrKey() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("nostr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (key, hex) = NostrSecretKey.generate()
        let file = folder.appendingPathComponent("nostr.key")
        try Data((hex + "\n").utf8).write(to: file)
        let on = try await HeraldConfiguration.load(
            flags: ["nostr.allow_private_relays": "true"], environment: ["HERALD_NOSTR_SECRET_KEY_FILE": file.path], file: nil)
        #expect(on.server.settings.zaps?.key.publicKeyHex == key.publicKeyHex)
        #expect(on.server.settings.zaps?.allowPrivateRelays == true)
        #expect(on.providers.relays?.allowPrivateRelays == true)
        #expect(on.summary.contains { $0.0 == "zaps" && $0.1.contains(key.publicKeyHex) })
        #expect(!on.summary.contains { $0.1.contains(hex) })
        #expect(try await HeraldConfiguration.load(flags: [:], environment: [:], file: nil).server.settings.zaps == nil)

        let bad = folder.appendingPathComponent("bad.key")
        try Data("not-a-key-\(hex.prefix(20))".utf8).write(to: bad)
        do {
            _ = try await HeraldConfiguration.load(flags: [:], environment: ["HERALD_NOSTR_SECRET_KEY_FILE": bad.path], file: nil)
            Issue.record("accepted a bad key")
        } catch {
            #expect("\(error)".contains("HERALD_NOSTR_SECRET_KEY_FILE"), "\(error)")
            #expect(!"\(error)".contains(String(hex.prefix(20))), "\(error)")
        }
    }

    @Test("Breez payments: the secret file, from the YAML file too, is the HMAC key as given less a final line break, and never shown")
    func breezSecret() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("breez-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let secret = "9f86d081884c7d659a2feaa0c55ad015"
        let file = folder.appendingPathComponent("breez.secret")
        try Data((secret + "\n").utf8).write(to: file)
        let yaml = folder.appendingPathComponent("herald.yaml")
        try Data("breez:\n  webhook_secret_file: \(file.path)\n".utf8).write(to: yaml)
        let on = try await HeraldConfiguration.load(flags: [:], environment: [:], file: yaml.path)
        #expect(on.server.settings.breez.webhookSecret == Array(secret.utf8))
        #expect(on.summary.contains { $0.0 == "breez payments" })
        #expect(!on.summary.contains { $0.1.contains(secret) })
        #expect(try await HeraldConfiguration.load(flags: [:], environment: [:], file: nil).server.settings.breez.webhookSecret == nil)
        do {
            _ = try await HeraldConfiguration.load(
                flags: [:], environment: ["HERALD_BREEZ_WEBHOOK_SECRET_FILE": folder.appendingPathComponent("missing").path], file: nil)
            Issue.record("accepted a missing secret file")
        } catch {
            #expect("\(error)".contains("HERALD_BREEZ_WEBHOOK_SECRET_FILE"), "\(error)")
        }
    }

    @Test("the wake gateway: topics from the file with their defaults, the audience from any layer; a bad topic names itself")
    func wakeGateway() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        func load(_ yaml: String, environment: [String: String] = [:]) async throws -> HeraldConfiguration {
            let file = folder.appendingPathComponent("\(UUID().uuidString).yaml")
            try Data(yaml.utf8).write(to: file)
            return try await HeraldConfiguration.load(flags: [:], environment: environment, file: file.path)
        }
        let configuration = try await load(
            """
            public_url: https://nds.example.com
            wake_gateway:
              topics:
                blocktank.incomingHtlc: { urgency: time_sensitive, alertable: true, title: Incoming Payment, body: Open Bitkit }
                paykit.sync: { deadline_secs: 600 }
            """)
        let gateway = configuration.server.settings.wakeGateway
        #expect(gateway.topics.keys.sorted() == ["blocktank.incomingHtlc", "paykit.sync"])
        let htlc = try #require(gateway.topics["blocktank.incomingHtlc"])
        #expect(htlc.urgency == .timeSensitive && htlc.deadlineSeconds == 60 && htlc.fallbackAfterSeconds == 15 && htlc.alertable)
        #expect(gateway.topics["paykit.sync"]?.urgency == .background && gateway.topics["paykit.sync"]?.alertable == false)
        #expect(gateway.audience == nil)
        let named = try await load("wake_gateway:\n  audience: wake.example.com\n", environment: ["HERALD_WAKE_GATEWAY_AUDIENCE": "env.example.com"])
        #expect(named.server.settings.wakeGateway.audience == "env.example.com")

        for (yaml, needle) in [
            ("wake_gateway:\n  topics:\n    blocktank.x: { urgency: loud }\n", "urgency"),
            ("wake_gateway:\n  topics:\n    Blocktank.x: {}\n", "Blocktank.x"),
            ("wake_gateway:\n  topics:\n    blocktank.x: { alertable: true }\n", "title and body"),
            (
                "wake_gateway:\n  topics:\n    blocktank.x: { deadline_secs: 10, fallback_after_secs: 10, alertable: true, title: a, body: b }\n",
                "fallback_after_secs"
            ),
            ("wake_gateway:\n  topics:\n    blocktank.x: { deadline_sec: 10 }\n", "wake_gateway.topics.blocktank.x.deadline_secs"),
        ] {
            do {
                _ = try await load(yaml)
                Issue.record("accepted \(yaml)")
            } catch {
                #expect("\(error)".contains(needle), "\(error)")
            }
        }
    }

    @Test("a key in the file that names no setting is an error naming it and the nearest one; an unknown HERALD_ variable a warning")
    func unknownNames() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let yaml = folder.appendingPathComponent("herald.yaml")
        try Data("jobttl: 5\napns:\n  key_idd: ABC\nbreez:\n  webhook_secret_file: /x\n".utf8).write(to: yaml)
        do {
            _ = try await HeraldConfiguration.load(flags: [:], environment: [:], file: yaml.path)
            Issue.record("a typo passed")
        } catch {
            let text = "\(error)"
            #expect(text.contains("'jobttl': no such setting; did you mean 'job_ttl'?"), "\(text)")
            #expect(text.contains("'apns.key_idd': no such setting; did you mean 'apns.key_id'?"), "\(text)")
            #expect(!text.contains("breez"), "\(text)")
        }
        let apps = folder.appendingPathComponent("apps.yaml")
        try Data("apps:\n  com.example.wallet:\n    fcm:\n      service_acount_file: /x\n".utf8).write(to: apps)
        do {
            _ = try await HeraldConfiguration.load(flags: [:], environment: [:], file: apps.path)
            Issue.record("a typo in an app passed")
        } catch {
            #expect("\(error)".contains("did you mean 'apps.com.example.wallet.fcm.service_account_file'?"), "\(error)")
        }
        let warned = try await HeraldConfiguration.load(flags: [:], environment: ["HERALD_JOBTTL": "5", "HERALD_PORT": "9000"], file: nil)
        #expect(warned.warnings == ["'HERALD_JOBTTL': no such setting; did you mean 'HERALD_JOB_TTL'?"])
        // A key inside a wake topic missing its unit gets the key it begins.
        let topics = folder.appendingPathComponent("topics.yaml")
        try Data("wake_gateway:\n  topics:\n    blocktank.incomingHtlc:\n      fallback_after: 10\n".utf8).write(to: topics)
        do {
            _ = try await HeraldConfiguration.load(flags: [:], environment: [:], file: topics.path)
            Issue.record("a typo in a topic passed")
        } catch {
            #expect(
                "\(error)".contains("did you mean 'wake_gateway.topics.blocktank.incomingHtlc.fallback_after_secs'?"), "\(error)")
        }
        // What config check prints: each configured topic.
        try Data(
            "wake_gateway:\n  topics:\n    blocktank.incomingHtlc:\n      urgency: time_sensitive\n      deadline_secs: 60\n      alertable: true\n      title: Paid\n      body: Open\n"
                .utf8
        )
        .write(to: topics)
        let loaded = try await HeraldConfiguration.load(flags: [:], environment: [:], file: topics.path)
        #expect(
            loaded.summary.contains { $0.0 == "wake topic blocktank.incomingHtlc" && $0.1 == "time_sensitive, deadline 60 s, fallback after 15 s" },
            "\(loaded.summary)")
    }

    @Test(
        "a bad apps section is refused, naming the app",
        arguments: [
            ("apps:\n  'bad name!':\n    fcm: { service_account_file: /x }\n", "app name 'bad name!'"),
            ("apps:\n  com.example.wallet: {}\n", "app 'com.example.wallet' has neither apns nor fcm"),
            ("apps:\n  com.example.wallet:\n    apns: { key_id: K }\n", "missing apps.com.example.wallet.apns.key_file"),
            ("apps:\n  com.example.wallet:\n    fcm: { service_account_file: /nonexistent.json }\n", "app 'com.example.wallet'"),
        ])
    func badApps(yaml: String, message: String) async throws {
        let file = try Self.yaml(yaml)
        do {
            _ = try await HeraldConfiguration.load(flags: [:], environment: [:], file: file)
            Issue.record("accepted \(yaml)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test(
        "bad values are refused with their name, whichever layer they came from",
        arguments: [
            ("port: eighty\n", [String: String](), "port in "),
            ("", ["HERALD_PORT": "eighty"], "HERALD_PORT must be a positive integer"),
            ("", ["HERALD_ACCEPT_RAW_TOKENS": "maybe"], "HERALD_ACCEPT_RAW_TOKENS must be true or false"),
            ("apns:\n  topic: com.example.wallet\n", [:], "APNs is partly configured"),
            ("public_url: ftp://x\n", [:], "must be an http or https URL"),
            ("apns:\n  key_file: /nonexistent.p8\n  key_id: K\n  team_id: T\n  topic: t\n", [:], "apns.key_file in "),
            (
                "", ["HERALD_APNS_KEY_FILE": "/nonexistent.p8", "HERALD_APNS_KEY_ID": "K", "HERALD_APNS_TEAM_ID": "T", "HERALD_APNS_TOPIC": "t"],
                "HERALD_APNS_KEY_FILE: cannot read"
            ),
            ("port: [1, 2\n", [:], "not valid YAML"),
            ("no_proxy: [a.example, b.example]\n", [:], "no_proxy is a list; it takes one value"),
        ])
    func invalid(yaml: String, environment: [String: String], message: String) async throws {
        let file = try Self.yaml(yaml)
        do {
            _ = try await HeraldConfiguration.load(flags: [:], environment: environment, file: file)
            Issue.record("accepted \(yaml) \(environment)")
        } catch {
            #expect("\(error)".contains(message), "\(error)")
        }
    }

    @Test("a configuration file that cannot be read is an error, not an empty configuration")
    func missingFile() async {
        await #expect(throws: HeraldConfiguration.Invalid.self) {
            try await HeraldConfiguration.load(flags: [:], environment: [:], file: "/nonexistent/herald.yaml")
        }
    }

    @Test("docs/configuration.md's table lists exactly the settings, with their flags, variables and defaults")
    func configurationDocTable() throws {
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs").appendingPathComponent("configuration.md")
        let text = try String(contentsOf: document, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex { $0.hasPrefix("| file key | flag | environment | default |") })
        var rows: [[String]] = []
        for line in lines[(header + 2)...] {
            guard line.hasPrefix("|") else { break }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "`", with: "") }
            rows.append(Array(cells.prefix(4)))
        }
        let expected = HeraldConfiguration.settings.map { [$0.key, $0.flag ?? "", $0.environment, $0.defaultValue] }
        #expect(rows == expected)
    }
}
