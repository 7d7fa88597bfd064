import RichPushCore
import Testing

@testable import RichPushNH

@Suite("NH send targets")
struct NHSendTargetTests {
    @Test(
        arguments: [
            (nil, "*"), ("", "*"), ("  ", "*"),
            ("sports || news", "sports || news"),
            ("$UserId:{alice} && !muted", "username:alice && !muted"),
            ("$userid:{bob@example.com} || vip", "username:bob@example.com || vip"),
            ((0..<20).map { "t\($0)" }.joined(separator: " || "), (0..<20).map { "t\($0)" }.joined(separator: " || ")),
            ("a && b && c && d && e && !f", "a && b && c && d && e && !f"),
        ] as [(String?, String)])
    func targets(header: String?, target: String) throws {
        #expect(try NHSendTarget.target(tagsHeader: header) == target)
    }

    @Test(arguments: [
        ("a && b && c && d && e && f && g", "names 7 tags"),
        ("(a || b || c || d || e || f) && !g", "names 7 tags"),
        ((0..<21).map { "t\($0)" }.joined(separator: " || "), "at most 20"),
        ("$InstallationId:{abc} && a", "NH's implicit tags are"),
        ("$UserId:alice", "NH's implicit tags are"),
        ("$UserId:{a b}", "user name may only hold"),
        ("*", "leave the header out"),
        ("a &&", "ends where a tag was expected"),
    ])
    func refusals(header: String, words: String) {
        #expect {
            _ = try NHSendTarget.target(tagsHeader: header)
        } throws: { error in
            guard let error = error as? NHError else { return false }
            return error.status == 400 && error.message.contains(words)
        }
    }

    @Test func installationTagsNameInstallations() throws {
        #expect(try NHSendTarget.installations(tagsHeader: nil) == nil)
        #expect(try NHSendTarget.installations(tagsHeader: "sports || news") == nil)
        #expect(try NHSendTarget.installations(tagsHeader: "$InstallationId:{dev-1}") == ["dev-1"])
        #expect(
            try NHSendTarget.installations(tagsHeader: " $installationid:{a.1} || $InstallationId:{b_2} || $InstallationId:{a.1} ")
                == ["a.1", "b_2"])
        for bad in ["$InstallationId:{a} && sports", "$InstallationId:{a} || sports", "$InstallationId:{}", "$InstallationId:{a/b}"] {
            #expect(throws: NHError.self, "\(bad)") { try NHSendTarget.installations(tagsHeader: bad) }
        }
        let many = (0..<21).map { "$InstallationId:{d\($0)}" }.joined(separator: " || ")
        #expect(throws: NHError.self) { try NHSendTarget.installations(tagsHeader: many) }
    }

    @Test func theTargetParsesAsTheWorkerReadsIt() throws {
        #expect(try TagExpression(parsing: NHSendTarget.target(tagsHeader: nil)) == .all)
        let user = try TagExpression(parsing: NHSendTarget.target(tagsHeader: "$UserId:{alice}"))
        #expect(user.matches(["username:alice"]) && !user.matches(["alice"]))
    }
}
