import Foundation
import HeraldWire

/// A Google service-account key file, the JSON the Firebase console downloads.
///
/// Only the fields FCM needs are read; the rest of the file is ignored.
public struct ServiceAccount: Codable, Sendable, Hashable {
    /// Google's token endpoint, used when the file names none.
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"

    /// `service_account`.
    public var type: String
    public var projectID: String
    public var privateKeyID: String
    /// The RSA private key, PEM (PKCS#8).
    public var privateKey: String
    public var clientEmail: String
    /// Where the signed assertion is exchanged for an access token.
    public var tokenURI: String

    public init(
        type: String = "service_account",
        projectID: String,
        privateKeyID: String,
        privateKey: String,
        clientEmail: String,
        tokenURI: String = ServiceAccount.defaultTokenURI
    ) {
        self.type = type
        self.projectID = projectID
        self.privateKeyID = privateKeyID
        self.privateKey = privateKey
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
    }

    /// Decodes a key file's contents.
    public init(json: Data) throws {
        self = try WireJSON.decode(ServiceAccount.self, from: json)
    }

    enum CodingKeys: String, CodingKey {
        case type
        case projectID = "project_id"
        case privateKeyID = "private_key_id"
        case privateKey = "private_key"
        case clientEmail = "client_email"
        case tokenURI = "token_uri"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        type = try c.decodeIfPresent(String.self, forKey: .type) ?? "service_account"
        projectID = try c.decode(String.self, forKey: .projectID)
        privateKeyID = try c.decode(String.self, forKey: .privateKeyID)
        privateKey = try c.decode(String.self, forKey: .privateKey)
        clientEmail = try c.decode(String.self, forKey: .clientEmail)
        tokenURI = try c.decodeIfPresent(String.self, forKey: .tokenURI) ?? Self.defaultTokenURI
    }
}

extension ServiceAccount: CustomStringConvertible, CustomDebugStringConvertible {
    /// Everything but the private key, so an account can be logged.
    public var description: String {
        "ServiceAccount(projectID: \(projectID), clientEmail: \(clientEmail), privateKeyID: \(privateKeyID), tokenURI: \(tokenURI))"
    }

    public var debugDescription: String { description }
}
