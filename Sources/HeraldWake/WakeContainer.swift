import Foundation
import HeraldSecp256k1
import HeraldWire

/// The JSON a sealed wake travels in, field order fixed as the gateway writes it:
/// `{"v":1,"cipher","iv","tag","publicKey"}` (v1) or the same without `v` (legacy v0). `cipher` is
/// standard base64, the rest lower-case hex.
public struct WakeContainer: Sendable, Hashable {
    /// 0 for the legacy envelope, 1 for wake v1.
    public var version: Int
    public var sealed: WakeSealing.Sealed

    public init(version: Int, sealed: WakeSealing.Sealed) {
        self.version = version
        self.sealed = sealed
    }

    public var label: String { version == 0 ? WakeSealing.v0Label : WakeSealing.v1Label }

    /// The container's exact text.
    public var json: String {
        var writer = JSONWriter(capacity: 256)
        write(to: &writer)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    func write(to writer: inout JSONWriter) {
        writer.beginObject()
        if version != 0 {
            writer.key("v")
            writer.integer(version)
        }
        writeFields(to: &writer)
        writer.endObject()
    }

    /// The four fields without braces' `v`, for the v0 FCM body that repeats them inline.
    func writeFields(to writer: inout JSONWriter) {
        writer.key("cipher")
        writer.string(Data(sealed.cipher).base64EncodedString())
        writer.key("iv")
        writer.string(sealed.iv.lowercaseHex)
        writer.key("tag")
        writer.string(sealed.tag.lowercaseHex)
        writer.key("publicKey")
        writer.string(sealed.publicKey.hex)
    }

    /// Reads a container: `v` absent is v0, `1` is v1, anything else is refused.
    public init(json value: JSONValue) throws(WakeSealing.Failure) {
        guard case .object(let members) = value else { throw WakeSealing.Failure("a wake container is a JSON object") }
        switch members["v"] {
        case nil: version = 0
        case .int(1)?: version = 1
        default: throw WakeSealing.Failure("unsupported envelope version")
        }
        guard let cipherText = members["cipher"]?.stringValue, let cipher = Data(base64Encoded: cipherText),
            let ivText = members["iv"]?.stringValue, let iv = [UInt8](hex: ivText),
            let tagText = members["tag"]?.stringValue, let tag = [UInt8](hex: tagText),
            let keyText = members["publicKey"]?.stringValue, let key = NodeID(hex: keyText)
        else { throw WakeSealing.Failure("a wake container needs cipher (base64), iv, tag and publicKey (hex)") }
        sealed = WakeSealing.Sealed(cipher: Array(cipher), iv: iv, tag: tag, publicKey: key)
    }
}
