import HeraldServer
import Testing

/// `herald serve`'s flags come from the settings table, not from declarations of their own.
@Suite("herald serve's flags")
struct SettingFlagsTests {
    @Test("every setting with a flag is taken as --flag VALUE and --flag=VALUE, by its key")
    func everyFlag() throws {
        let flagged = HeraldConfiguration.settings.filter { $0.flag != nil }
        #expect(flagged.count >= 20)
        // A true-or-false flag takes only such a value after a space; anything else takes any.
        func value(_ setting: SettingDescription) -> String {
            setting.defaultValue == "true" || setting.defaultValue == "false" ? "off" : "v-\(setting.key)"
        }
        let spaced = try SettingFlags.parse(flagged.flatMap { [$0.flag!, value($0)] })
        let joined = try SettingFlags.parse(flagged.map { "\($0.flag!)=\(value($0))" })
        let expected = Dictionary(uniqueKeysWithValues: flagged.map { ($0.key, value($0)) })
        #expect(spaced == expected)
        #expect(joined == expected)
        #expect(try SettingFlags.parse(["--port=-1", "--public-url", "http://a=b"]) == ["port": "-1", "public_url": "http://a=b"])
        #expect(try SettingFlags.parse(["--port", "1", "--port=2"]) == ["port": "2"], "the last one wins")
    }

    @Test("a true-or-false flag may stand alone or be negated with --no-, and still takes a value")
    func booleans() throws {
        let booleans = HeraldConfiguration.settings.filter { $0.flag != nil && ($0.defaultValue == "true" || $0.defaultValue == "false") }
        #expect(
            Set(booleans.map(\.key)) == [
                "accept_raw_tokens", "local_provider", "webpush.allow_insecure_endpoints", "webpush.allow_private_endpoints",
                "nostr.allow_private_relays",
            ])
        #expect(try SettingFlags.parse(["--local-provider", "--port", "1"]) == ["local_provider": "true", "port": "1"])
        #expect(try SettingFlags.parse(["--no-accept-raw-tokens"]) == ["accept_raw_tokens": "false"])
        #expect(try SettingFlags.parse(["--accept-raw-tokens", "off"]) == ["accept_raw_tokens": "off"])
        #expect(
            try SettingFlags.parse(["--accept-raw-tokens=no", "--nostr-allow-private-relays"]) == [
                "accept_raw_tokens": "no", "nostr.allow_private_relays": "true",
            ])
        #expect(throws: HeraldConfiguration.Invalid.self) { try SettingFlags.parse(["--no-port"]) }
    }

    @Test("secrets have no flag, and an unknown flag or one without a value is refused with a reason")
    func refusals() throws {
        #expect(HeraldConfiguration.settings.first { $0.key == "apns.key_file" }?.flag == nil)
        let cases: [([String], String)] = [
            (["--prot", "1"], "'--prot': no such option; did you mean '--port'?"),
            (["--apns-key-file", "k.p8"], "no such option"),
            (["8080"], "no such option"),
            (["--port"], "--port needs a value"),
            (["--port", "--host", "x"], "--port needs a value"),
        ]
        for (arguments, reason) in cases {
            let error = #expect(throws: HeraldConfiguration.Invalid.self) { try SettingFlags.parse(arguments) }
            #expect(error?.description.contains(reason) == true, "\(arguments): \(error?.description ?? "")")
        }
    }

    @Test("the help lists every flag with its help, variable and default from the table")
    func help() {
        for setting in HeraldConfiguration.settings {
            let line = setting.flag.map { "\($0) <value>: \(setting.help) [\(setting.environment), default \(setting.defaultValue)]" }
            if let line { #expect(SettingFlags.help.contains(line)) } else { #expect(!SettingFlags.help.contains(setting.environment)) }
        }
    }
}
