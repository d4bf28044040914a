//! Built-in names, places and numbers that fill the slots of wrappers and template notices.

use super::rng::Rng;

/// Chinese surnames.
pub(super) const ZH_SURNAMES: [&str; 36] = [
    "王", "李", "张", "刘", "陈", "杨", "黄", "赵", "吴", "周", "徐", "孙", "马", "朱", "胡", "郭",
    "何", "高", "林", "罗", "郑", "梁", "谢", "宋", "唐", "许", "韩", "冯", "邓", "曹", "彭", "曾",
    "肖", "田", "董", "欧阳",
];
/// Characters of Chinese given names.
pub(super) const ZH_GIVEN: [&str; 40] = [
    "伟", "芳", "娜", "敏", "静", "丽", "强", "磊", "军", "洋", "勇", "艳", "杰", "娟", "涛", "明",
    "超", "秀", "霞", "平", "刚", "桂", "英", "华", "玲", "鹏", "辉", "婷", "宇", "浩", "欣", "晨",
    "思", "雨", "嘉", "子", "梓", "俊", "凯", "琳",
];
/// Chinese companies (without the legal suffix).
pub(super) const ZH_COMPANIES: [&str; 32] = [
    "华信科技",
    "中鼎实业",
    "瑞丰控股",
    "天成电子",
    "宏远物流",
    "金桥传媒",
    "恒通能源",
    "博雅教育",
    "新元医药",
    "凯达机械",
    "永泰地产",
    "星辰网络",
    "东方精工",
    "正邦农业",
    "海纳环保",
    "创维智造",
    "汇川信息",
    "鼎盛建设",
    "光启材料",
    "安信证券服务",
    "锦程旅游",
    "同润食品",
    "嘉禾影视",
    "北辰汽车",
    "润丰纺织",
    "远景新能",
    "明阳化工",
    "卓越软件",
    "泰康医疗",
    "云帆数据",
    "华茂投资",
    "天润乳业",
];
/// Chinese banks.
pub(super) const ZH_BANKS: [&str; 16] = [
    "工商银行",
    "建设银行",
    "农业银行",
    "中国银行",
    "交通银行",
    "招商银行",
    "浦发银行",
    "民生银行",
    "兴业银行",
    "中信银行",
    "光大银行",
    "平安银行",
    "华夏银行",
    "广发银行",
    "邮储银行",
    "北京银行",
];
/// Chinese apps and services that send text messages.
pub(super) const ZH_APPS: [&str; 20] = [
    "淘宝网",
    "京东",
    "美团",
    "饿了么",
    "支付宝",
    "微信支付",
    "拼多多",
    "滴滴出行",
    "携程旅行",
    "抖音",
    "哔哩哔哩",
    "小红书",
    "12306",
    "顺丰速运",
    "中国移动",
    "中国联通",
    "中国电信",
    "国家政务服务平台",
    "个人所得税",
    "高德地图",
];
/// Chinese cities.
pub(super) const ZH_CITIES: [&str; 32] = [
    "北京",
    "上海",
    "广州",
    "深圳",
    "杭州",
    "南京",
    "成都",
    "重庆",
    "武汉",
    "西安",
    "苏州",
    "天津",
    "长沙",
    "郑州",
    "青岛",
    "厦门",
    "宁波",
    "合肥",
    "济南",
    "福州",
    "昆明",
    "沈阳",
    "大连",
    "哈尔滨",
    "南昌",
    "贵阳",
    "南宁",
    "太原",
    "石家庄",
    "兰州",
    "无锡",
    "佛山",
];
/// English first names.
pub(super) const EN_FIRST: [&str; 32] = [
    "James",
    "Mary",
    "Robert",
    "Patricia",
    "John",
    "Jennifer",
    "Michael",
    "Linda",
    "David",
    "Elizabeth",
    "William",
    "Barbara",
    "Richard",
    "Susan",
    "Joseph",
    "Jessica",
    "Thomas",
    "Sarah",
    "Charles",
    "Karen",
    "Daniel",
    "Nancy",
    "Matthew",
    "Lisa",
    "Anthony",
    "Betty",
    "Mark",
    "Sandra",
    "Steven",
    "Ashley",
    "Andrew",
    "Emily",
];
/// English last names.
pub(super) const EN_LAST: [&str; 32] = [
    "Smith",
    "Johnson",
    "Williams",
    "Brown",
    "Jones",
    "Garcia",
    "Miller",
    "Davis",
    "Rodriguez",
    "Martinez",
    "Hernandez",
    "Lopez",
    "Wilson",
    "Anderson",
    "Thomas",
    "Taylor",
    "Moore",
    "Jackson",
    "Martin",
    "Lee",
    "Thompson",
    "White",
    "Harris",
    "Clark",
    "Lewis",
    "Robinson",
    "Walker",
    "Young",
    "Allen",
    "King",
    "Wright",
    "Scott",
];
/// English company names (without the legal suffix).
pub(super) const EN_COMPANIES: [&str; 32] = [
    "Acme Industries",
    "Northwind Traders",
    "Globex",
    "Initech",
    "Umbrella Foods",
    "Stark Metals",
    "Wayne Enterprises",
    "Cyberdyne Systems",
    "Soylent Brands",
    "Hooli",
    "Vandelay Imports",
    "Pied Piper",
    "Massive Dynamic",
    "Gringotts Financial",
    "Oceanic Airlines",
    "Tyrell",
    "Wonka Confectionery",
    "Dunder Mifflin Paper",
    "Bluth Homes",
    "Prestige Worldwide",
    "Sterling Cooper",
    "Monarch Utilities",
    "Aperture Science",
    "Black Mesa Energy",
    "Blue Ridge Bancorp",
    "Pacific Gas Holdings",
    "Midwest Grain",
    "Atlantic Shipping",
    "Summit Healthcare",
    "Redwood Capital",
    "Granite State Mills",
    "Harbor Freight Lines",
];
/// English cities.
pub(super) const EN_CITIES: [&str; 30] = [
    "New York",
    "Chicago",
    "Houston",
    "Phoenix",
    "Philadelphia",
    "San Antonio",
    "San Diego",
    "Dallas",
    "Austin",
    "Denver",
    "Seattle",
    "Boston",
    "Atlanta",
    "Miami",
    "Detroit",
    "Portland",
    "Nashville",
    "Memphis",
    "Baltimore",
    "Milwaukee",
    "Omaha",
    "Tulsa",
    "Cleveland",
    "Pittsburgh",
    "Toronto",
    "London",
    "Sydney",
    "Dublin",
    "Singapore",
    "Vancouver",
];
/// English month names.
pub(super) const EN_MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
/// Syllables of made-up account, site and publisher names.
const SYLLABLES: [&str; 40] = [
    "ka", "lo", "mi", "ra", "ven", "tor", "zu", "bel", "qui", "nar", "sol", "dex", "vi", "ron",
    "ta", "mar", "lin", "ko", "sen", "dra", "pax", "el", "or", "fin", "gal", "hu", "jo", "lum",
    "nix", "pre", "sta", "tri", "ux", "wen", "yo", "zen", "cor", "da", "ber", "mo",
];

/// One of `items`.
pub(super) fn pick<'a>(rng: &mut Rng, items: &[&'a str]) -> &'a str {
    items[rng.below(items.len())]
}

/// `count` random decimal digits (the first may be 0).
pub(super) fn digits(rng: &mut Rng, count: usize) -> String {
    (0..count)
        .map(|_| char::from(b'0' + rng.below(10) as u8))
        .collect()
}

/// A number in `low..=high`.
pub(super) fn between(rng: &mut Rng, low: usize, high: usize) -> usize {
    low + rng.below(high - low + 1)
}

/// A Chinese full name (surname and one or two given characters).
pub(super) fn zh_name(rng: &mut Rng) -> String {
    let mut name = pick(rng, &ZH_SURNAMES).to_owned();
    for _ in 0..1 + rng.below(2) {
        name.push_str(pick(rng, &ZH_GIVEN));
    }
    name
}

/// An English full name.
pub(super) fn en_name(rng: &mut Rng) -> String {
    format!("{} {}", pick(rng, &EN_FIRST), pick(rng, &EN_LAST))
}

/// A made-up lowercase word of two or three syllables.
pub(super) fn word(rng: &mut Rng) -> String {
    (0..2 + rng.below(2))
        .map(|_| pick(rng, &SYLLABLES))
        .collect()
}

/// `word` with its first letter in upper case.
pub(super) fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// A Chinese mobile number, `1xx-xxxx-xxxx` without the dashes.
pub(super) fn mobile(rng: &mut Rng) -> String {
    let prefix = pick(rng, &["13", "15", "17", "18", "19"]);
    format!("{prefix}{}", digits(rng, 9))
}

/// A North American phone number, `(xxx) xxx-xxxx`.
pub(super) fn en_phone(rng: &mut Rng) -> String {
    format!(
        "({}) {}-{}",
        between(rng, 201, 989),
        between(rng, 200, 999),
        digits(rng, 4)
    )
}

/// An amount of money with two decimals, from `low` to `high` units.
pub(super) fn amount(rng: &mut Rng, low: usize, high: usize) -> String {
    format!("{}.{}", between(rng, low, high), digits(rng, 2))
}

/// Replaces every `{slot}` of `pattern` by `value(slot)`, left to right.
pub(super) fn fill(pattern: &str, mut value: impl FnMut(&str) -> String) -> String {
    let mut out = String::with_capacity(pattern.len() + 32);
    let mut rest = pattern;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = open + rest[open..].find('}').expect("slots are closed");
        out.push_str(&value(&rest[open + 1..close]));
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_filled_left_to_right() {
        let mut count = 0;
        let filled = fill("a{x}b{y}c{x}", |slot| {
            count += 1;
            format!("{slot}{count}")
        });
        assert_eq!(filled, "ax1by2cx3");
        assert_eq!(fill("no slots", |_| unreachable!()), "no slots");
        assert_eq!(capitalized("kalo"), "Kalo");
    }
}
