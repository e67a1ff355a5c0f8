import Foundation
import HeraldServer
import Testing

/// Each capability's settings, read by its room through a reader scoped to its keys: every
/// layer reaches them, their flags are generated from their rows, and their errors name the
/// layer a value came from.
@Suite("Room settings")
struct RoomSettingsTests {
    static func yaml(_ text: String) throws -> String { try HeraldConfigurationTests.yaml(text) }

    @Test("a room's settings come from its flags, variables and file keys, scoped or not; unset, its defaults")
    func layers() async throws {
        let flags = try SettingFlags.parse(["--wake-fallback-after", "9", "--nostr-max-relays=7", "--live-activity-attributes-type", "A.B"])
        let file = try Self.yaml("nostr:\n  max_relays_per_host: 3\n  allow_private_relays: true\nidentity_devices_max: 5\n")
        let read = try await HeraldConfiguration.load(flags: flags, environment: ["HERALD_WAKE_ALERT": "fallback"], file: file).server.settings
        #expect(read.wakes.fallbackAfter == 9)
        #expect(read.wakes.alert == .fallback)
        #expect(read.wakes.fallbackGrace == WakeSettings().fallbackGrace)
        #expect(read.nwc.maxRelays == 7)
        #expect(read.nwc.maxRelaysPerHost == 3)
        #expect(read.nwc.relays.allowPrivateRelays)
        #expect(read.identity.devicesMax == 5)
        #expect(read.liveActivities.attributesType == "A.B")
        #expect(read.bip353 == nil)
        #expect(read.breez.webhookSecret == nil)
        let unset = try await HeraldConfiguration.load(flags: [:], environment: [:], file: nil).server.settings
        #expect(unset.wakes == WakeSettings())
        #expect(unset.identity == IdentitySettings())
        #expect(unset.liveActivities == LiveActivitySettings())
        #expect(unset.nwc.maxRelays == NwcSettings().maxRelays)
    }

    @Test("a room's rows are in the table with their full keys, flags only where the room says")
    func rows() {
        let table = Dictionary(uniqueKeysWithValues: HeraldConfiguration.settings.map { ($0.key, $0) })
        #expect(table["bip353.server"]?.flag == "--bip353-server")
        #expect(table["bip353.tsig_key_file"]?.flag == nil)
        #expect(table["nostr.max_relays_per_host"]?.environment == "HERALD_NOSTR_MAX_RELAYS_PER_HOST")
        #expect(table["breez.webhook_secret_file"]?.flag == nil)
        #expect(table["wake_fallback_grace"]?.defaultValue == "10")
    }

    @Test(
        "a room's bad value is refused naming its flag, variable or file key",
        arguments: [
            ([String: String](), "wake_fallback_after: 61\n", "wake_fallback_after in <file> must be 1 to 60 seconds, not 61"),
            (["HERALD_WAKE_ALERT": "sometimes"], "", "HERALD_WAKE_ALERT must be always or fallback, not 'sometimes'"),
            (["HERALD_NOSTR_MAX_RELAYS": "0"], "", "HERALD_NOSTR_MAX_RELAYS must be a positive integer, not '0'"),
            ([:], "live_activity_attributes_type: bad type\n", "live_activity_attributes_type in <file> must be a Swift type name, not 'bad type'"),
            (
                [:], "bip353:\n  server: 127.0.0.1:5353\n",
                "bip353.server in <file> needs HERALD_BIP353_TSIG_KEY_FILE: updates are signed with TSIG"
            ),
            (["HERALD_BREEZ_WEBHOOK_SECRET_FILE": "/nonexistent"], "", "HERALD_BREEZ_WEBHOOK_SECRET_FILE: cannot read '/nonexistent'"),
        ])
    func invalid(environment: [String: String], yaml: String, message: String) async throws {
        let file = try Self.yaml(yaml)
        let error = await #expect(throws: HeraldConfiguration.Invalid.self) {
            try await HeraldConfiguration.load(flags: [:], environment: environment, file: file)
        }
        #expect(error?.description == message.replacingOccurrences(of: "<file>", with: file))
    }

    @Test("a flag's error names the flag")
    func flagNamed() async throws {
        let error = await #expect(throws: HeraldConfiguration.Invalid.self) {
            try await HeraldConfiguration.load(flags: SettingFlags.parse(["--wake-fallback-grace", "90"]), environment: [:], file: nil)
        }
        #expect(error?.description == "--wake-fallback-grace must be 1 to 60 seconds, not 90")
    }
}
