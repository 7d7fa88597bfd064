import RichPushCore
import Testing

/// How an app is named where it travels: an API key's token and an app id's own rules.
@Suite("App ids and API key tokens")
struct AppNamesTests {
    static let secret = String(repeating: "A", count: 43)
    static let id = "0123456789abcdef"

    @Test func aDefaultAppTokenKeepsItsShapeAndAnotherAppsNamesTheApp() throws {
        let plain = APIKey.token(app: .default, id: Self.id, secret: Self.secret)
        #expect(plain == "rpk_\(Self.id)_\(Self.secret)")
        let parsed = try #require(APIKey.parse(token: plain))
        #expect(parsed.app == .default && parsed.id == Self.id)

        let shop = try #require(AppID(validating: "shop"))
        let scoped = APIKey.token(app: shop, id: Self.id, secret: Self.secret)
        #expect(scoped == "rpk_shop.\(Self.id)_\(Self.secret)")
        let back = try #require(APIKey.parse(token: scoped))
        #expect(back.app == shop && back.id == Self.id)
        #expect(APIKey.id(inToken: scoped) == Self.id)
    }

    @Test(arguments: [
        "rpk_Shop.0123456789abcdef_" + String(repeating: "A", count: 43),  // not an app id
        "rpk_default.0123456789abcdef_" + String(repeating: "A", count: 43),  // the default app is never named
        "rpk_.0123456789abcdef_" + String(repeating: "A", count: 43),
        "rpk_shop.0123456789abcdeF_" + String(repeating: "A", count: 43),  // an id is lowercase hex
        "rpk_shop.0123456789abcdef_" + String(repeating: "A", count: 42),
        "rpk_shop.0123456789abcdef_" + String(repeating: "A", count: 42) + "!",
        "rpk_" + String(repeating: "a", count: 40) + ".0123456789abcdef_" + String(repeating: "A", count: 43),
        "rpk_0123456789abcdef_" + String(repeating: "A", count: 43) + "A",
    ])
    func malformedTokensNameNoKey(token: String) {
        #expect(APIKey.parse(token: token) == nil)
    }

    @Test func appIdsAreSlugs() {
        for good in ["shop", "news-beta", "a1", String(repeating: "a", count: 32)] { #expect(AppID(validating: good) != nil, "\(good)") }
        for bad in ["", "s", "Shop", "1shop", "shop-", "sh_op", "sh.op", "sh@op", String(repeating: "a", count: 33)] {
            #expect(AppID(validating: bad) == nil, "\(bad)")
        }
        #expect(AppID.default.isDefault && AppID(validating: "default")?.isDefault == true)
    }
}
