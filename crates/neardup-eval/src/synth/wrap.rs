//! Accounts that wrap every post in the same header and footer: boilerplate hard negatives
//! (different bodies in one account's wrapper) and re-wrapped positives (one body in two
//! accounts' wrappers).

use super::names::{
    between, capitalized, digits, en_name, en_phone, fill, mobile, pick, word, zh_name, EN_CITIES,
    EN_COMPANIES, EN_MONTHS, ZH_CITIES, ZH_COMPANIES,
};
use super::rng::Rng;

/// Header and footer + body of at most this many characters: the wrapper is longer.
pub const SHORT_BODY: usize = 300;

/// Chinese header lines (`{account}`, `{name}`, ... are filled per account).
const ZH_HEADERS: [&str; 8] = [
    "{account}｜{slogan}",
    "点击上方蓝字“{account}”关注我们，每天推送最新资讯！",
    "来源：{account}（ID：{wxid}）",
    "作者：{name}　编辑：{name}　审核：{name}",
    "本文共{num3}字，预计阅读时间{num1}分钟。",
    "↑点击上方“{account}”，设为星标，第一时间获取精彩内容",
    "{year}年第{num2}期 · {account}出品 · {city}",
    "导读：{slogan}，{account}带你读懂今天的新闻。",
];
/// Chinese footer lines.
const ZH_FOOTERS: [&str; 14] = [
    "本文来源于网络，版权归原作者所有，如有侵权请联系删除。",
    "点击下方“阅读原文”查看更多精彩内容",
    "编辑：{name} 责任编辑：{name}",
    "转载请注明出处：{account}（{site}）",
    "关注{account}公众号，获取每日最新资讯",
    "声明：本文仅代表作者观点，不代表本平台立场。",
    "商务合作请联系：{mobile}（微信同号），投稿邮箱：{email}",
    "觉得好看，请点“在看”，分享给更多朋友！",
    "往期推荐：{account}{year}年度精选合集，第{num2}期已上线。",
    "扫描下方二维码，加入{account}读者交流群，群号{num6}。",
    "免责声明：本平台所载内容仅供参考，不构成任何投资建议，据此操作风险自担。",
    "图片来源：{site}，如涉及版权问题请及时与我们联系，我们将在第一时间处理。",
    "{account}由{city}{company}有限公司主办，{company}提供技术支持。",
    "热线电话：{phone}　地址：{city}市{company}大厦{num2}层",
];
/// Chinese slogans.
const ZH_SLOGANS: [&str; 12] = [
    "有温度的资讯平台",
    "每天五分钟，看懂大世界",
    "专注财经深度报道",
    "只做有态度的新闻",
    "你身边的生活百科",
    "权威发布，及时准确",
    "看见不一样的城市",
    "科技改变生活",
    "陪你读懂每一条新闻",
    "最接地气的本地号",
    "用数据说话",
    "品质阅读，从这里开始",
];
/// Words of Chinese account names.
const ZH_ACCOUNT_WORDS: [&str; 24] = [
    "财经",
    "视界",
    "头条",
    "早知道",
    "观察",
    "日报",
    "快讯",
    "生活",
    "热点",
    "前沿",
    "周刊",
    "在线",
    "资讯",
    "洞见",
    "星球",
    "研究社",
    "说事",
    "速递",
    "读书",
    "科技",
    "侃侃",
    "新闻眼",
    "圈",
    "汇",
];

/// English header lines.
const EN_HEADERS: [&str; 8] = [
    "This article originally appeared on {site}.",
    "{publisher} | {slogan}",
    "By {name}, {publisher} staff writer | Updated {month} {day}, {year}",
    "Sign up for the {account} newsletter to get stories like this in your inbox.",
    "Listen to this article - {num1} min read",
    "Sponsored content from {company} - advertisement",
    "{city} edition | {account} | Issue {num3}",
    "Editor's note: {slogan}. Read the full series at {site}.",
];
/// English footer lines.
const EN_FOOTERS: [&str; 14] = [
    "Copyright © {year} {publisher}. All rights reserved.",
    "Subscribe to our newsletter for the latest updates.",
    "Reporting by {name}; Editing by {name}",
    "Follow us on social media @{handle} for more stories like this.",
    "This material may not be published, broadcast, rewritten or redistributed without permission.",
    "Have a news tip? Email us at {email} or call {phone}.",
    "The views expressed in this article are those of the author and do not necessarily reflect the position of {publisher}.",
    "Read more of our {year} coverage at {site}/news/{num4}.",
    "Our Standards: The {publisher} Trust Principles.",
    "{publisher} is a registered trademark of {company} Inc, {city}.",
    "Share this article: Facebook - Twitter - LinkedIn - Email",
    "Want more? Download the {account} app and never miss a headline.",
    "Additional reporting by {name} in {city}.",
    "Corrections: contact the {account} standards desk at {email}.",
];
/// English slogans.
const EN_SLOGANS: [&str; 12] = [
    "News you can trust",
    "Independent journalism since {since}",
    "All the news that matters",
    "Your daily briefing",
    "Markets, money and more",
    "Local stories, global reach",
    "Fearless reporting every day",
    "The stories behind the headlines",
    "Smart news for busy people",
    "Business news first",
    "Facts first",
    "Where the world gets its news",
];
/// Words of English publisher names.
const EN_MEDIA: [&str; 12] = [
    "Media", "News", "Herald", "Post", "Times", "Gazette", "Wire", "Daily", "Journal", "Tribune",
    "Press", "Network",
];

/// A header and a footer in one language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wrapper {
    /// Lines before the body.
    pub header: String,
    /// Lines after the body.
    pub footer: String,
}

impl Wrapper {
    /// `header + "\n" + body + "\n" + footer`.
    pub fn wrap(&self, body: &str) -> String {
        format!("{}\n{body}\n{}", self.header, self.footer)
    }

    /// Characters of the header and the footer.
    pub fn chars(&self) -> usize {
        self.header.chars().count() + self.footer.chars().count()
    }
}

/// One account: the wrapper of its Chinese posts and that of its other posts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    /// For bodies with CJK characters.
    pub zh: Wrapper,
    /// For the other bodies.
    pub en: Wrapper,
}

impl Account {
    /// The wrapper for `body`'s script.
    pub fn wrapper(&self, cjk: bool) -> &Wrapper {
        match cjk {
            true => &self.zh,
            false => &self.en,
        }
    }
}

/// `count` accounts drawn from `rng`.
pub fn accounts(count: usize, rng: &mut Rng) -> Vec<Account> {
    (0..count)
        .map(|_| Account {
            zh: zh_wrapper(rng),
            en: en_wrapper(rng),
        })
        .collect()
}

/// A Chinese wrapper of more than [`SHORT_BODY`] characters.
fn zh_wrapper(rng: &mut Rng) -> Wrapper {
    let account = format!(
        "{}{}{}",
        pick(rng, &ZH_CITIES),
        pick(rng, &ZH_ACCOUNT_WORDS),
        pick(rng, &ZH_ACCOUNT_WORDS)
    );
    let account = match rng.chance(0.5) {
        true => format!("{account}{}", between(rng, 2, 999)),
        false => account,
    };
    let domain = format!("{}{}", word(rng), between(rng, 1, 99));
    let slogan = pick(rng, &ZH_SLOGANS);
    let city = pick(rng, &ZH_CITIES);
    let company = pick(rng, &ZH_COMPANIES);
    let year = between(rng, 2015, 2025);
    let phone = format!("0{}-{}", between(rng, 10, 999), digits(rng, 8));
    let slot = |slot: &str, rng: &mut Rng| match slot {
        "account" => account.clone(),
        "slogan" => slogan.to_owned(),
        "wxid" => format!("{domain}{}", digits(rng, 2)),
        "site" => format!("www.{domain}.com"),
        "email" => format!("{}@{domain}.cn", word(rng)),
        "name" => zh_name(rng),
        "mobile" => mobile(rng),
        "phone" => phone.clone(),
        "city" => city.to_owned(),
        "company" => company.to_owned(),
        "year" => year.to_string(),
        "num1" => between(rng, 2, 9).to_string(),
        "num2" => between(rng, 10, 99).to_string(),
        "num3" => between(rng, 800, 4999).to_string(),
        _ => digits(rng, 9),
    };
    let target = between(rng, SHORT_BODY + 10, SHORT_BODY + 120);
    build(rng, &ZH_HEADERS, &ZH_FOOTERS, target, slot)
}

/// An English wrapper of more than [`SHORT_BODY`] characters.
fn en_wrapper(rng: &mut Rng) -> Wrapper {
    let name = capitalized(&word(rng));
    let publisher = format!("{name} {}", pick(rng, &EN_MEDIA));
    let account = match rng.chance(0.5) {
        true => format!("{publisher} {}", between(rng, 2, 99)),
        false => format!("{name} Today"),
    };
    let domain = format!("{}{}", name.to_lowercase(), between(rng, 1, 99));
    let slogan = fill(pick(rng, &EN_SLOGANS), |_| {
        between(rng, 1850, 2010).to_string()
    });
    let city = pick(rng, &EN_CITIES);
    let company = pick(rng, &EN_COMPANIES);
    let year = between(rng, 2015, 2025);
    let phone = en_phone(rng);
    let slot = |slot: &str, rng: &mut Rng| match slot {
        "account" => account.clone(),
        "publisher" => publisher.clone(),
        "slogan" => slogan.clone(),
        "site" => format!("www.{domain}.com"),
        "handle" => format!("{domain}{}", word(rng)),
        "email" => format!("{}@{domain}.com", word(rng)),
        "name" => en_name(rng),
        "phone" => phone.clone(),
        "city" => city.to_owned(),
        "company" => company.to_owned(),
        "year" => year.to_string(),
        "month" => pick(rng, &EN_MONTHS).to_owned(),
        "day" => between(rng, 1, 28).to_string(),
        "num1" => between(rng, 2, 9).to_string(),
        "num3" => between(rng, 100, 999).to_string(),
        _ => digits(rng, 5),
    };
    let target = between(rng, SHORT_BODY + 20, SHORT_BODY + 220);
    build(rng, &EN_HEADERS, &EN_FOOTERS, target, slot)
}

/// Two or three header lines, then footer lines until the wrapper has `target` characters
/// (reusing the pools if they run out), in a random order.
fn build(
    rng: &mut Rng,
    headers: &[&str],
    footers: &[&str],
    target: usize,
    mut slot: impl FnMut(&str, &mut Rng) -> String,
) -> Wrapper {
    let mut line = |pattern: &str, rng: &mut Rng| fill(pattern, |name| slot(name, rng));
    let mut order: Vec<usize> = (0..headers.len()).collect();
    rng.shuffle(&mut order);
    let count = 2 + rng.below(2);
    let header: Vec<String> = order[..count]
        .iter()
        .map(|&i| line(headers[i], rng))
        .collect();
    let header = header.join("\n");
    let mut length = header.chars().count();
    let mut footer: Vec<String> = Vec::new();
    while length < target {
        let mut order: Vec<usize> = (0..footers.len()).collect();
        rng.shuffle(&mut order);
        for i in order {
            if length >= target {
                break;
            }
            let next = line(footers[i], rng);
            length += next.chars().count() + usize::from(!footer.is_empty());
            footer.push(next);
        }
    }
    Wrapper {
        header,
        footer: footer.join("\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounts_are_long_and_distinct() {
        let accounts = accounts(50, &mut Rng::new(3));
        for account in &accounts {
            assert!(account.zh.chars() > SHORT_BODY, "{account:?}");
            assert!(account.en.chars() > SHORT_BODY, "{account:?}");
            assert!(account
                .zh
                .header
                .chars()
                .any(neardup_core::tokenize::is_cjk));
            assert!(!account
                .en
                .footer
                .chars()
                .any(neardup_core::tokenize::is_cjk));
        }
        for (i, a) in accounts.iter().enumerate() {
            for b in &accounts[i + 1..] {
                assert_ne!(a.zh, b.zh);
                assert_ne!(a.en, b.en);
            }
        }
        assert_eq!(accounts, super::accounts(50, &mut Rng::new(3)));
    }
}
