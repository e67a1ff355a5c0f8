import HeraldDNS
import Testing

@Suite("BIND key files")
struct BINDKeyFileTests {
    /// What `tsig-keygen -a hmac-sha256 herald-test` prints: tabs, a quoted name and secret.
    static let tsigKeygen = """
        key "herald-test" {
        \talgorithm hmac-sha256;
        \tsecret "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
        };

        """

    static func reason(_ text: String) -> BINDKeyFileError.Reason? {
        do {
            _ = try BINDKeyFile.parse(text)
            return nil
        } catch {
            return error.reason
        }
    }

    static func line(_ text: String) -> Int? {
        do {
            _ = try BINDKeyFile.parse(text)
            return nil
        } catch {
            return error.line
        }
    }

    @Test("tsig-keygen's output: the key signs exactly as one built by hand")
    func tsigKeygenOutput() throws {
        let key = try BINDKeyFile.parse(Self.tsigKeygen)
        #expect(key.name == (try DNSName("herald-test")))
        #expect(key.algorithm == .hmacSHA256)
        let signed = key.sign(UpdateVectors.message.encoded(), time: UpdateVectors.time)
        #expect(signed.mac == UpdateVectors.sha256MAC)
    }

    @Test("hmac-sha512, an unquoted or upper-case name with a trailing dot, comments of every kind, one line")
    func variations() throws {
        let commented = """
            # made by tsig-keygen
            // for Herald
            key Herald-Test. { /* the algorithm
               comes first */ algorithm HMAC-SHA512; # trailing
                secret "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" ; } ;
            """
        let key = try BINDKeyFile.parse(commented)
        #expect(key.name == (try DNSName("herald-test")))
        #expect(key.algorithm == .hmacSHA512)
        #expect(key.sign(UpdateVectors.message.encoded(), time: UpdateVectors.time).mac == UpdateVectors.sha512MAC)
        let oneLine = #"key "herald-test" { secret "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="; algorithm hmac-sha256; };"#
        #expect(try BINDKeyFile.parse(oneLine).sign(UpdateVectors.message.encoded(), time: UpdateVectors.time).mac == UpdateVectors.sha256MAC)
    }

    @Test("bad files: each error names its reason and line")
    func badFiles() {
        let secret = #"secret "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";"#
        let cases: [(String, BINDKeyFileError.Reason, Int)] = [
            ("", .noKey, 1),
            ("# only a comment\n", .noKey, 1),
            ("key \"a\" { algorithm hmac-md5; \(secret) };", .unsupportedAlgorithm, 1),
            ("key \"a\" {\n algorithm hmac-sha256-128; \(secret) };", .unsupportedAlgorithm, 2),
            ("key \"a\" {\n algorithm hmac-sha1; \(secret) };", .unsupportedAlgorithm, 2),
            ("key \"a\" { \(secret) };", .missingAlgorithm, 1),
            ("key \"a\" { algorithm hmac-sha256; };", .missingSecret, 1),
            ("key \"a\" { algorithm hmac-sha256; secret \"not base64!\"; };", .invalidSecret, 1),
            ("key \"a\" { algorithm hmac-sha256; secret \"\"; };", .invalidSecret, 1),
            ("key \"a\" { algorithm hmac-sha256; algorithm hmac-sha256; \(secret) };", .duplicateOption, 1),
            ("key \"a\" { algorithm hmac-sha256;\n\n keyfile \"x\"; \(secret) };", .unknownOption, 3),
            ("key \"a\" { algorithm hmac-sha256 \(secret) };", .unexpectedToken, 1),
            ("key \"a\" { algorithm hmac-sha256; \(secret) }", .unexpectedEnd, 1),
            ("key \"a\" { algorithm hmac-sha256; \(secret)", .unexpectedEnd, 1),
            ("key \"a\" { algorithm hmac-sha256; \(secret) };\nkey \"b\" { algorithm hmac-sha256; \(secret) };", .multipleKeys, 2),
            ("options { };", .unexpectedToken, 1),
            ("key { algorithm hmac-sha256; \(secret) };", .unexpectedToken, 1),
            ("key \"a b\" { algorithm hmac-sha256; \(secret) };", .invalidKeyName, 1),
            ("key \"a\" { algorithm hmac-sha256; secret \"AAEC\nAwQF\"; };", .unterminatedString, 1),
            ("key \"a\" { algorithm hmac-sha256; \(secret) }; /* never closed", .unterminatedComment, 1),
            ("\"key\" \"a\" { algorithm hmac-sha256; \(secret) };", .unexpectedToken, 1),
        ]
        for (text, reason, line) in cases {
            #expect(Self.reason(text) == reason, "\(text)")
            #expect(Self.line(text) == line, "\(text)")
        }
    }
}
