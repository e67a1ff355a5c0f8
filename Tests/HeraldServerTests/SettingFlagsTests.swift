import HeraldServer
import Testing

/// `herald serve`'s flags come from the settings table, not from declarations of their own.
@Suite("herald serve's flags")
struct SettingFlagsTests {
    @Test("every setting with a flag is taken as --flag VALUE and --flag=VALUE, by its key")
    func everyFlag() throws {
        let flagged = HeraldConfiguration.settings.filter { $0.flag != nil }
        #expect(flagged.count >= 20)
        let spaced = try SettingFlags.parse(flagged.flatMap { [$0.flag!, "v-\($0.key)"] })
        let joined = try SettingFlags.parse(flagged.map { "\($0.flag!)=v-\($0.key)" })
        let expected = Dictionary(uniqueKeysWithValues: flagged.map { ($0.key, "v-\($0.key)") })
        #expect(spaced == expected)
        #expect(joined == expected)
        #expect(try SettingFlags.parse(["--port=-1", "--public-url", "http://a=b"]) == ["port": "-1", "public_url": "http://a=b"])
        #expect(try SettingFlags.parse(["--port", "1", "--port=2"]) == ["port": "2"], "the last one wins")
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
