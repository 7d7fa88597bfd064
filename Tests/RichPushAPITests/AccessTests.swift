import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import RedisTestSupport
import Testing

/// Authentication and authorization.
@Suite("Access")
struct AccessTests {
    @Test func missingOrWrongCredentialsAre401WithAChallenge() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                for headers in [HTTPFields(), APIFixture.basic("alice", "wrong"), APIFixture.basic("nobody", "x"), [.authorization: "Basic !!!"]] {
                    try await client.execute(uri: "/api/notifications", method: .get, headers: headers) { response in
                        #expect(response.status == .unauthorized)
                        #expect(response.headers[.wwwAuthenticate]?.hasPrefix("Basic") == true)
                        #expect(response.errorCode == "unauthorized")
                    }
                }
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice")) { #expect($0.status == .ok) }
            }
        }
    }

    @Test func bruteForceIsSlowedPerUser() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.auth.maxFailuresPerUser = 3 }
            try await fixture.test { client in
                for _ in 0..<3 {
                    try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("bob", "guess")) { #expect($0.status == .unauthorized) }
                }
                // Even the right password is refused while the user is locked.
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("bob")) { response in
                    #expect(response.status == .tooManyRequests)
                    #expect(Int(response.headers[.retryAfter] ?? "") ?? 0 > 0)
                }
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice")) { #expect($0.status == .ok) }
            }
        }
    }

    @Test func demoModeLetsInUserNameEqualsPasswordOnly() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server) { $0.auth.mode = .demo }
            try await fixture.test { client in
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("carol", "carol")) { #expect($0.status == .ok) }
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("carol", "other")) { #expect($0.status == .unauthorized) }
                // bcrypt users do not get in with their real password in demo mode.
                try await client.execute(uri: "/api/notifications", method: .get, headers: APIFixture.basic("alice")) { #expect($0.status == .unauthorized) }
            }
        }
    }

    @Test func othersNotificationsAndRegistrationsAre404() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let aliceDevice = try await client.register("alice", handle: "token-a")
                let id = try #require(try await client.sendImage("alice").json["id"] as? String)
                for path in ["/api/notifications/\(id)", "/api/notifications/\(id)/status"] {
                    try await client.execute(uri: path, method: .get, headers: APIFixture.basic("bob")) { response in
                        #expect(response.status == .notFound)
                        #expect(response.errorMessage == "no notification \(id)")
                    }
                }
                // The same answer as for an id that does not exist: nothing to learn by guessing.
                try await client.execute(uri: "/api/notifications/999999", method: .get, headers: APIFixture.basic("bob")) {
                    #expect($0.status == .notFound && $0.errorMessage == "no notification 999999")
                }
                try await client.execute(uri: "/api/notifications/\(id)/receipts", method: .post, headers: APIFixture.basic("bob"),
                                         body: APIFixture.json(["kind": "opened"])) { #expect($0.status == .notFound) }
                try await client.execute(uri: "/api/register/\(aliceDevice)", method: .delete, headers: APIFixture.basic("bob")) { #expect($0.status == .notFound) }
                try await client.execute(uri: "/api/register/\(aliceDevice)", method: .put, headers: APIFixture.basic("bob"),
                                         body: APIFixture.json(["Platform": "apns", "Handle": "stolen"])) { #expect($0.status == .notFound) }
                // Alice's device is untouched, and she can delete it.
                try await client.execute(uri: "/api/register/\(aliceDevice)", method: .delete, headers: APIFixture.basic("alice")) { #expect($0.status == .ok) }
            }
        }
    }

    @Test func adminsTargetTagExpressionsAndRecipientsMayRead() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                _ = try await client.register("bob", handle: "token-b", tags: ["sports"])
                _ = try await client.register("alice", handle: "token-a", tags: ["sports", "weekend"])
                // A user may not send beyond their own tag.
                let refused = try await client.sendImage("bob", target: "sports")
                #expect(refused.status == .forbidden)
                let accepted = try await client.sendImage("root", target: "sports && !weekend")
                #expect(accepted.status == .accepted)
                #expect(accepted.json["target"] as? String == "sports && !weekend")
                let id = try #require(accepted.json["id"] as? String)
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("bob")) { #expect($0.status == .ok) }
                try await client.execute(uri: "/api/notifications/\(id)", method: .get, headers: APIFixture.basic("alice")) { #expect($0.status == .notFound) }
                let bad = try await client.sendImage("root", target: "sports &&")
                #expect(bad.status == .unprocessableContent && bad.errorCode == "bad_target")
            }
        }
    }

    @Test func usersMayOnlyPutTheirOwnUserTagOnDevices() async throws {
        try await withRedisServer { server in
            let fixture = try await APIFixture(server: server)
            try await fixture.test { client in
                let id = try await client.execute(uri: "/api/register", method: .post, headers: APIFixture.basic("bob")) {
                    try JSONDecoder().decode(String.self, from: Data(buffer: $0.body))
                }
                try await client.execute(uri: "/api/register/\(id)", method: .put, headers: APIFixture.basic("bob"),
                                         body: APIFixture.json(["Platform": "apns", "Handle": "h", "Tags": ["username:alice"]])) { response in
                    #expect(response.status == .forbidden)
                }
                try await client.execute(uri: "/api/register/\(id)", method: .put, headers: APIFixture.basic("bob"),
                                         body: APIFixture.json(["Platform": "APNS", "Handle": "h", "Tags": ["news"]])) { response in
                    #expect(response.status == .ok)
                    #expect(response.json["Tags"] as? [String] == ["news", "username:bob"])
                }
            }
        }
    }
}
