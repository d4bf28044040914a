#!/usr/bin/env python3
"""Deterministic web-like corpora for the span-removal benchmark (`neardup spans` against
ExactSubstr, google-research/deduplicate-text-datasets).

    make_corpora.py --lang en|zh|mix --size-mb 100 --out FILE.jsonl [--seed 1] [--data DIR]

Writes JSONL, one page a line: {"id": "en-0000001", "text": "..."} (UTF-8, ensure_ascii off),
until the file holds --size-mb million bytes (the last page may pass it). Same arguments, same
bytes: only the seeded `random.Random` streams and the sorted source files decide anything.

Body text comes from the shared data folder (--data, $NEARDUP_DATA, or ../shared/data beside
the repository):
  en: reuters21578/bodies.jsonl and textreuse-ats/*.txt (about 19 MB of text);
  zh: sohu-news-pairs/*.jsonl (sentence1/sentence2) and thucnews-titles/titles.jsonl (about 1M
      characters).
Those sources are far smaller than the corpora, so every body paragraph is rebuilt from real
sentences (en) or clauses (zh) and then mutated: one word (en, every 4-9 words) or one Han
character (zh, every 8-20 characters) is replaced by a word/character that follows the
previous one somewhere in the sources (a number by a number of the same shape). No run of 100
bytes (en) or 50 characters (zh) survives unchanged, so body text is unique at those lengths
and what repeats is what the generator repeats on purpose:

  - site templates (60 en / 40 zh sites): navigation bar, cookie banner, share buttons,
    newsletter box, copyright and licence footer; zh: "本文转载自…", "免责声明：…",
    "特别声明：…", app download prompts, "（责任编辑：…）", follow/like prompts with emoji;
  - a few quoted passages that many pages copy (whole, or a run of their sentences);
  - exact reposts (the whole text of an earlier page), syndicated copies (an earlier page's
    body paragraphs, whole or a contiguous part, inside another site's template) and updated
    versions (an earlier body with paragraphs replaced and added).

Per-page details (dates, bylines, view counts, related titles, ad slots) vary, so templates
are repeated in pieces, as on real pages. With the default mix, ExactSubstr at 100 bytes (en)
or 150 bytes (zh) marks about 10-15% of the bytes.

--lang mix alternates en and zh pages, keeping their byte counts about even (for the 1 GB run:
--lang mix --size-mb 1000).
"""

import argparse
import json
import os
import random
import re
import sys
from pathlib import Path

MB = 1_000_000


def default_data_dir():
    env = os.environ.get("NEARDUP_DATA")
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[3] / "shared" / "data"


# ---------------------------------------------------------------------------------------------
# shared helpers

NUM_RE = re.compile(r"^\(?[-+$]?\d[\d,.]*%?\)?[.,;:]?$")


def renumber(rng, tok):
    """A number of the same shape: each digit replaced, the first one kept non-zero."""
    out = []
    first = True
    for ch in tok:
        if ch.isdigit():
            out.append(str(rng.randint(1, 9) if first else rng.randint(0, 9)))
            first = False
        else:
            out.append(ch)
    return "".join(out)


class Store:
    """A bounded reservoir of earlier pages (the sources of reposts)."""

    def __init__(self, rng, cap=3000):
        self.rng = rng
        self.cap = cap
        self.items = []
        self.seen = 0

    def add(self, item):
        self.seen += 1
        if len(self.items) < self.cap:
            self.items.append(item)
        else:
            j = self.rng.randrange(self.seen)
            if j < self.cap:
                self.items[j] = item

    def pick(self):
        return self.items[self.rng.randrange(len(self.items))] if self.items else None


def weighted(rng, pairs):
    total = sum(w for _, w in pairs)
    x = rng.random() * total
    for v, w in pairs:
        x -= w
        if x < 0:
            return v
    return pairs[-1][0]


# ---------------------------------------------------------------------------------------------
# English

EN_SITE_A = ["Daily", "Global", "Metro", "Capital", "Harbor", "Summit", "Prairie", "Coastal",
             "Union", "Pioneer", "Liberty", "Northern", "Valley", "Evening", "Morning", "Frontier"]
EN_SITE_B = ["Ledger", "Tribune", "Observer", "Herald", "Post", "Wire", "Times", "Journal",
             "Gazette", "Chronicle", "Dispatch", "Review", "Report", "Bulletin", "Courier",
             "Insider"]
EN_SECTIONS = ["World", "U.S.", "Business", "Markets", "Technology", "Politics", "Opinion",
               "Sports", "Entertainment", "Health", "Science", "Climate", "Lifestyle", "Travel",
               "Video", "Podcasts", "Real Estate", "Autos", "Education", "Local", "Energy",
               "Commodities", "Economy", "Personal Finance"]
EN_FIRST = ["James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda",
            "David", "Elizabeth", "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica",
            "Thomas", "Sarah", "Carlos", "Aisha", "Wei", "Priya", "Olga", "Kenji", "Fatima",
            "Lucas", "Emma", "Noah", "Sofia", "Omar"]
EN_LAST = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
           "Rodriguez", "Martinez", "Hernandez", "Lopez", "Wilson", "Anderson", "Taylor",
           "Thomas", "Moore", "Jackson", "Martin", "Lee", "Chen", "Patel", "Nakamura", "Kowalski",
           "O'Brien", "Schmidt", "Rossi", "Haddad", "Okafor", "Novak"]
EN_ROLES = ["Staff Writer", "Senior Correspondent", "Markets Reporter", "Contributor",
            "Business Editor", "Washington Bureau", "Special to the paper"]
EN_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
             "September", "October", "November", "December"]

EN_COOKIES = [
    "We use cookies and similar technologies to improve your experience on our site, to "
    "personalize content and ads, to provide social media features and to analyze our "
    "traffic. By clicking \"Accept all\" you consent to our use of cookies. You can change "
    "your preferences at any time in Cookie Settings.\nAccept all | Reject all | Manage "
    "preferences",
    "This website stores cookies on your computer. These cookies are used to collect "
    "information about how you interact with our website and allow us to remember you. We "
    "use this information in order to improve and customize your browsing experience and for "
    "analytics and metrics about our visitors both on this website and other media. To find "
    "out more about the cookies we use, see our Privacy Policy.\nAccept | Decline",
    "{site} and our partners use cookies to deliver our services, measure audience and show "
    "you relevant advertising. Continuing to browse means you accept this use. Read our "
    "Cookie Policy to learn more or to opt out.\nOK, got it",
    "Your privacy matters to us. We and our 843 partners store and/or access information on "
    "a device, such as unique IDs in cookies, to process personal data. You may accept or "
    "manage your choices by clicking below, including your right to object where legitimate "
    "interest is used.\nI ACCEPT | MORE OPTIONS",
    "By continuing to use this site you agree to the use of cookies as described in our "
    "Privacy and Cookie Policy. We use cookies to remember your settings, keep you signed in "
    "and understand how the site is used.\nClose",
]
EN_LICENCES = [
    "This material may not be published, broadcast, rewritten or redistributed in whole or "
    "in part without prior written permission.",
    "Except where otherwise noted, content on this site is licensed under a Creative Commons "
    "Attribution 4.0 International License. Third-party trademarks and logos remain the "
    "property of their respective owners.",
    "Use of this site constitutes acceptance of our User Agreement, Privacy Policy and Cookie "
    "Statement, and Your California Privacy Rights. {site} may earn a portion of sales from "
    "products that are purchased through our site as part of our Affiliate Partnerships with "
    "retailers.",
    "Market data provided by third parties is delayed by at least 15 minutes. Quotes are for "
    "informational purposes only and are not intended for trading purposes or advice. All "
    "times are Eastern Time.",
]
EN_FOOTER_LINKS = [
    "About Us · Contact · Careers · Advertise · Terms of Service · Privacy Policy · Cookie "
    "Settings · Accessibility · Sitemap",
    "About | Newsroom Ethics | Corrections | Contact Us | Subscriber Services | Terms | Privacy "
    "| Do Not Sell My Personal Information",
    "Company Info · Press Room · Work With Us · Help Center · Terms of Use · Privacy Notice",
]
EN_SHARES = [
    "Share this article: Facebook | Twitter | LinkedIn | WhatsApp | Email | Print",
    "SHARE  TWEET  EMAIL  PRINT  SAVE",
    "Share on Facebook  Share on X  Share via Email  Copy link",
    "Share this story on social media: Facebook, X (formerly Twitter), Reddit, LinkedIn, "
    "Pinterest or email it to a friend.",
]
EN_QUOTE_INTROS = ["As one writer put it:", "The passage, widely shared online, reads:",
                   "Readers keep sending us this quotation:", "It is worth recalling the words:",
                   "One reader wrote in to remind us:", "As the old saying goes:"]


def smart_title(t):
    t = " ".join(t.split())
    if t.isupper():
        small = {"a", "an", "and", "as", "at", "but", "by", "for", "in", "of", "on", "or", "the",
                 "to", "up", "with"}
        words = t.lower().split(" ")
        t = " ".join(w if (i and w in small) else w[:1].upper() + w[1:]
                     for i, w in enumerate(words))
    return t


SENT_SPLIT_EN = re.compile(r"(?<=[.!?])\s+(?=[\"'(]?[A-Z])")


class English:
    def __init__(self, data, rng):
        self.rng = rng
        paras, titles = [], []
        with open(data / "reuters21578" / "bodies.jsonl", encoding="utf-8") as f:
            for line in f:
                r = json.loads(line)
                t = r.get("text") or ""
                t = re.sub(r"\s*(Reuter|REUTER)\s*(&#3;)?\s*$", "", t)
                for p in re.split(r"\n {2,}", t):
                    p = " ".join(p.split())
                    if len(p) >= 60:
                        paras.append(p)
                if r.get("title"):
                    titles.append(smart_title(r["title"]))
        for path in sorted((data / "textreuse-ats").glob("*.txt")):
            t = path.read_text(encoding="utf-8", errors="replace")
            t = re.sub(r"-\s*\n\s*(?=[a-z])", "", t)  # line-end hyphenation
            for p in re.split(r"\n\s*\n", t):
                p = " ".join(p.split())
                if len(p) >= 150 and sum(c.isalpha() for c in p) > 0.7 * len(p):
                    paras.append(p)
        self.paras = paras
        self.titles = titles
        self.sents = [SENT_SPLIT_EN.split(p) for p in paras]
        succ = {}
        tokens = []
        for p in paras:
            toks = p.split(" ")
            tokens.extend(toks)
            for a, b in zip(toks, toks[1:]):
                lst = succ.get(a)
                if lst is None:
                    succ[a] = [b]
                else:
                    lst.append(b)
        self.succ = succ
        self.tokens = tokens
        self.store = Store(rng)
        self.sites = [self.make_site(i) for i in range(60)]
        # passages many pages quote: long ATS paragraphs (verbatim, never mutated)
        ats = [p for p in paras[-20000:] if 300 <= len(p) <= 800 and "'" not in p[:1]]
        self.quotes = [ats[rng.randrange(len(ats))] for _ in range(8)]
        self.quotes += [paras[rng.randrange(len(paras) // 2)] for _ in range(4)]
        self.quote_sents = [SENT_SPLIT_EN.split(q) for q in self.quotes]

    def make_site(self, i):
        rng = self.rng
        name = f"The {EN_SITE_A[i % 16]} {EN_SITE_B[(i * 7 + i // 16) % 16]}"
        domain = name.lower().replace("the ", "").replace(" ", "") + rng.choice(
            [".com", ".com", ".net", ".org", ".co.uk", ".news"])
        secs = rng.sample(EN_SECTIONS, rng.randint(6, 11))
        nav = " | ".join(["Home"] + secs + rng.choice([["Subscribe", "Sign In"],
                                                       ["Newsletters", "Log in"],
                                                       ["Search", "Menu"], ["Donate"]]))
        cookie = rng.choice(EN_COOKIES).replace("{site}", name) if rng.random() < 0.7 else None
        licence = rng.choice(EN_LICENCES).replace("{site}", name)
        links = rng.choice(EN_FOOTER_LINKS)
        owner = rng.choice(["Media Group, Inc.", "Publishing LLC", "Holdings Ltd.",
                            "News Company", "Communications Corp."])
        share = rng.choice(EN_SHARES)
        newsletter = (f"Get {name} {rng.choice(['Morning Briefing', 'Evening Edition', 'Markets Daily', 'Weekend Read'])} "
                      "delivered to your inbox. Sign up for our free newsletter and never miss a "
                      "story. By signing up you agree to our Terms of Use and acknowledge the data "
                      "practices in our Privacy Policy. You may unsubscribe at any time.")
        tagline = rng.choice(["Independent journalism since 1887", "News you can trust",
                              "All the news, all the time", "Your source for business news",
                              "Local news, global reach"])
        return dict(name=name, domain=domain, nav=nav, cookie=cookie, licence=licence,
                    links=links, owner=owner, share=share, newsletter=newsletter,
                    tagline=tagline, secs=secs)

    # -- text pieces
    def mutate(self, text):
        rng = self.rng
        toks = text.split(" ")
        n = len(toks)
        i = rng.randint(1, 9)
        succ = self.succ
        tokens = self.tokens
        while i < n:
            old = toks[i]
            if NUM_RE.match(old):
                new = renumber(rng, old)
                if new == old:
                    new = old + "0" if old[-1:].isdigit() else "1" + old
            else:
                new = old
                lst = succ.get(toks[i - 1])
                if lst:
                    for _ in range(3):
                        new = lst[rng.randrange(len(lst))]
                        if new != old:
                            break
                while new == old:
                    new = tokens[rng.randrange(len(tokens))]
            toks[i] = new
            i += rng.randint(4, 9)
        return " ".join(toks)

    def fresh_para(self):
        rng = self.rng
        k = rng.randrange(len(self.sents))
        ss = self.sents[k]
        target = rng.randint(200, 800)
        start = rng.randrange(len(ss))
        out, size = [], 0
        j = start
        while size < target:
            if j >= len(ss):
                k = rng.randrange(len(self.sents))
                ss = self.sents[k]
                j = rng.randrange(len(ss))
            out.append(ss[j])
            size += len(ss[j]) + 1
            j += 1
        return self.mutate(" ".join(out))

    def title(self):
        t = self.titles[self.rng.randrange(len(self.titles))]
        return self.mutate(t) if len(t) > 40 else t

    def date(self):
        rng = self.rng
        y = rng.randint(2019, 2025)
        h = rng.randint(1, 12)
        return y, (f"{EN_MONTHS[rng.randrange(12)]} {rng.randint(1, 28)}, {y} "
                   f"{h}:{rng.randint(0, 59):02d} {rng.choice(['AM', 'PM'])} ET")

    def byline(self):
        rng = self.rng
        return (f"By {rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}"
                + (f", {rng.choice(EN_ROLES)}" if rng.random() < 0.6 else ""))

    def quote(self):
        rng = self.rng
        q = rng.randrange(len(self.quotes))
        if rng.random() < 0.35 and len(self.quote_sents[q]) > 2:
            ss = self.quote_sents[q]
            a = rng.randrange(len(ss) - 1)
            b = rng.randint(a + 2, len(ss))
            text = " ".join(ss[a:b])
        else:
            text = self.quotes[q]
        return f"{rng.choice(EN_QUOTE_INTROS)} \"{text}\""

    # -- pages
    def render(self, site, title, body, year, date, origin=None):
        rng = self.rng
        lines = [f"{site['name']} | {site['tagline']}" if rng.random() < 0.8 else site["name"]]
        if rng.random() < 0.85:
            lines.append(site["nav"])
        if site["cookie"] and rng.random() < 0.4:
            lines.append(site["cookie"])
        lines.append(f"{rng.choice(site['secs'])} › {rng.choice(EN_SECTIONS)}")
        lines.append(title)
        lines.append(f"{self.byline()} | Published {date}"
                     + (f" | Updated {rng.randint(1, 11)} hours ago" if rng.random() < 0.3 else ""))
        if rng.random() < 0.2:
            lines.append(site["share"])
        if origin:
            lines.append(f"This article originally appeared on {origin['name']} "
                         f"({origin['domain']}) and is republished here with permission.")
        for k, p in enumerate(body):
            lines.append(p)
            r = rng.random()
            if k and r < 0.06:
                lines.append("Advertisement")
            elif r < 0.10:
                lines.append(f"Read more: {self.title()}")
        if rng.random() < 0.3:
            lines.append(site["share"])
        if rng.random() < 0.4:
            tags = rng.sample(EN_SECTIONS, 3)
            lines.append("Topics: " + ", ".join(tags))
        if rng.random() < 0.2:
            lines.append(site["newsletter"])
        if rng.random() < 0.35:
            lines.append("Related Stories")
            lines.extend("• " + self.title() for _ in range(rng.randint(3, 5)))
        if rng.random() < 0.15:
            lines.append(f"{rng.randint(2, 900)} comments. Join the conversation: be respectful, "
                         "stay on topic and follow our community guidelines. Comments are "
                         "moderated and may take up to 24 hours to appear.")
        if rng.random() < 0.6:
            lines.append(f"© {year} {site['name'][4:]} {site['owner']} All rights reserved. "
                         + site["licence"])
            if rng.random() < 0.35:
                lines.append(site["links"])
        return "\n".join(lines)

    def page(self):
        rng = self.rng
        kind = weighted(rng, [("fresh", 0.967), ("exact", 0.01), ("syndicated", 0.015),
                              ("updated", 0.008), ("quote-heavy", 0.01)])
        old = self.store.pick() if kind in ("exact", "syndicated", "updated") else None
        if old is None:
            kind = "fresh"
        if kind == "exact":
            return old["text"]
        year, date = self.date()
        if kind == "syndicated":
            body = old["body"]
            if rng.random() < 0.5 and len(body) > 2:
                half = max(1, len(body) // 2)
                a = rng.randint(0, len(body) - half)
                b = rng.randint(a + half, len(body))
                body = body[a:b]
            site = self.sites[rng.randrange(len(self.sites))]
            text = self.render(site, old["title"], body, year, date,
                               origin=self.sites[old["site"]])
            return text
        if kind == "updated":
            body = list(old["body"])
            for _ in range(rng.randint(1, 2)):
                body[rng.randrange(len(body))] = self.fresh_para()
            body.append(self.fresh_para())
            s = old["site"]
            text = self.render(self.sites[s], f"UPDATE {rng.randint(1, 3)}-" + old["title"], body,
                               year, date)
            return text
        s = rng.randrange(len(self.sites))
        n = max(2, min(20, int(rng.lognormvariate(2.1, 0.45))))
        body = [self.fresh_para() for _ in range(n)]
        if kind == "quote-heavy" or rng.random() < 0.04:
            body.insert(rng.randint(1, len(body)), self.quote())
        title = self.title()
        text = self.render(self.sites[s], title, body, year, date)
        self.store.add(dict(site=s, title=title, body=body, text=text))
        return text


# ---------------------------------------------------------------------------------------------
# Chinese

ZH_SITE_A = ["华夏", "东方", "南方", "北方", "长江", "黄河", "云端", "星河", "天下", "环球",
             "今日", "晨光", "新潮", "前沿", "都市", "海峡", "中原", "西部", "江南", "齐鲁"]
ZH_SITE_B = ["新闻", "日报", "晚报", "财经", "科技", "网", "快报", "时报", "观察", "资讯"]
ZH_SECTIONS = ["要闻", "国内", "国际", "财经", "股票", "科技", "体育", "娱乐", "汽车", "房产",
               "教育", "健康", "旅游", "军事", "社会", "文化", "时尚", "游戏", "视频", "图片"]
ZH_SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘"
ZH_GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰建国志红文斌宇浩凯健晨欣怡"
ZH_EMOJI = ["😂", "👍", "🔥", "❤️", "🙏", "😭", "👏", "🎉", "📈", "💪", "😅", "🤔"]
ZH_DISCLAIMERS = [
    "免责声明：本文仅代表作者个人观点，与本网站无关。其原创性以及文中陈述文字和内容未经本站证实，"
    "对本文以及其中全部或者部分内容、文字的真实性、完整性、及时性本站不作任何保证或承诺，"
    "请读者仅作参考，并请自行核实相关内容。",
    "免责声明：市场有风险，投资需谨慎。本文所载信息仅供参考，不构成任何投资建议，"
    "投资者据此操作，风险自担。",
    "特别声明：以上内容（如有图片或视频亦包括在内）为自媒体平台用户上传并发布，"
    "本平台仅提供信息存储服务。",
]
ZH_QUOTE_INTROS = ["据官方通报：", "有网友转发了这样一段话：", "正如评论所说：", "相关负责人表示：",
                   "记者注意到，一段文字在网上广泛流传："]


def is_han(ch):
    return "\u4e00" <= ch <= "\u9fff"


class Chinese:
    def __init__(self, data, rng):
        self.rng = rng
        texts = []
        for name in ("dc-test.jsonl", "dd-test.jsonl"):
            path = data / "sohu-news-pairs" / name
            with open(path, encoding="utf-8") as f:
                for line in f:
                    r = json.loads(line)
                    for key in ("sentence1", "sentence2"):
                        if r.get(key):
                            texts.append(r[key])
        seen, uniq = {}, []
        for t in texts:
            if t not in seen:
                seen[t] = 1
                uniq.append(t)
        titles = []
        with open(data / "thucnews-titles" / "titles.jsonl", encoding="utf-8") as f:
            for line in f:
                titles.append(json.loads(line)["text"].strip())
        self.titles = titles
        # source paragraphs split into sentences, sentences into clauses
        sents = []
        paras = []
        for t in uniq:
            for p in re.split(r"\s{2,}", t):
                p = p.strip()
                if len(p) < 8 or sum(map(is_han, p)) < 0.3 * len(p):
                    continue
                paras.append(p)
                for s in re.findall(r"[^。！？]+[。！？]?[”」]?", p):
                    s = s.strip()
                    if len(s) >= 6:
                        cl = [c for c in re.split(r"[，；,]", s.rstrip("。！？”」")) if c]
                        if cl:
                            sents.append(cl)
        self.sents = sents
        succ = {}
        chars = []
        for t in uniq + titles:
            for a, b in zip(t, t[1:]):
                if is_han(b):
                    chars.append(b)
                    lst = succ.get(a)
                    if lst is None:
                        succ[a] = [b]
                    else:
                        lst.append(b)
        self.succ = succ
        self.chars = chars
        self.store = Store(rng)
        self.sites = [self.make_site(i) for i in range(40)]
        long_paras = [p for p in paras if 90 <= len(p) <= 260]
        self.quotes = [long_paras[rng.randrange(len(long_paras))] for _ in range(8)]

    def name(self):
        rng = self.rng
        return rng.choice(ZH_SURNAMES) + "".join(rng.choice(ZH_GIVEN)
                                                 for _ in range(rng.randint(1, 2)))

    def make_site(self, i):
        rng = self.rng
        name = ZH_SITE_A[i % 20] + ZH_SITE_B[(i * 3 + i // 20) % 10]
        secs = rng.sample(ZH_SECTIONS, rng.randint(7, 12))
        nav = " | ".join(["首页"] + secs + rng.choice([["登录", "注册"], ["客户端"],
                                                      ["搜索"], ["会员中心", "投稿"]]))
        app = rng.choice([
            f"打开{name}APP，阅读全文 👉 下载{name}客户端，第一时间获取最新资讯，更多精彩内容请关注{name}官方微博和微信公众号。",
            f"📱下载{name}客户端，随时随地看新闻，还有海量视频和独家报道等你来看！点击下载>>",
            f"扫描下方二维码，关注{name}微信公众号，获取更多权威资讯。",
        ])
        repost = (f"本文转载自{name}，版权归原作者所有，如有侵权请联系我们删除。"
                  "转载请注明出处，未经授权不得转载、摘编或利用其它方式使用上述作品。")
        share = rng.choice(["分享到：微信 微博 QQ空间 复制链接", "分享到：微信朋友圈 新浪微博 QQ好友",
                            "【分享】 【打印】 【关闭】 【收藏】"])
        copyright_ = rng.choice([
            f"Copyright © 2008-2025 {name} 版权所有 未经书面授权禁止使用。违法和不良信息举报电话：010-{rng.randint(10000000, 99999999)}",
            f"{name}版权所有，未经许可不得复制、转载或镜像。联系我们 | 关于我们 | 广告服务 | 网站地图 | 隐私政策",
        ])
        return dict(name=name, nav=nav, app=app, repost=repost, share=share,
                    copyright=copyright_, disclaimer=rng.choice(ZH_DISCLAIMERS), secs=secs)

    def mutate(self, text):
        rng = self.rng
        chars = list(text)
        n = len(chars)
        i = rng.randint(1, 20)
        succ = self.succ
        pool = self.chars
        while i < n:
            old = chars[i]
            if is_han(old):
                new = old
                lst = succ.get(chars[i - 1])
                if lst:
                    for _ in range(3):
                        new = lst[rng.randrange(len(lst))]
                        if new != old:
                            break
                while new == old:
                    new = pool[rng.randrange(len(pool))]
                chars[i] = new
                i += rng.randint(8, 20)
            elif old.isdigit():
                chars[i] = str(rng.randint(0, 9))
                i += rng.randint(8, 20)
            else:
                i += 1
        return "".join(chars)

    def sentence(self):
        rng = self.rng
        ss = self.sents[rng.randrange(len(self.sents))]
        k = rng.randint(1, min(3, len(ss)))
        a = rng.randint(0, len(ss) - k)
        parts = ss[a:a + k]
        if rng.random() < 0.5:
            ss2 = self.sents[rng.randrange(len(self.sents))]
            parts = parts + ss2[:rng.randint(1, min(2, len(ss2)))]
        end = weighted(rng, [("。", 0.9), ("！", 0.05), ("？", 0.03), ("……", 0.02)])
        s = "，".join(parts) + end
        if rng.random() < 0.04:
            s += rng.choice(ZH_EMOJI)
        return s

    def fresh_para(self):
        rng = self.rng
        target = rng.randint(60, 300)
        out, size = [], 0
        while size < target:
            s = self.sentence()
            out.append(s)
            size += len(s)
        return self.mutate("".join(out))

    def title(self):
        return self.titles[self.rng.randrange(len(self.titles))]

    def date(self):
        rng = self.rng
        return (f"{rng.randint(2019, 2025)}年{rng.randint(1, 12)}月{rng.randint(1, 28)}日 "
                f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}")

    def quote(self):
        rng = self.rng
        q = self.quotes[rng.randrange(len(self.quotes))]
        if rng.random() < 0.35:
            sents = re.findall(r"[^。！？]+[。！？]?", q)
            if len(sents) > 2:
                a = rng.randrange(len(sents) - 1)
                q = "".join(sents[a:rng.randint(a + 2, len(sents))])
        return f"{rng.choice(ZH_QUOTE_INTROS)}“{q}”"

    def render(self, site, title, body, origin=None):
        rng = self.rng
        lines = []
        if rng.random() < 0.6:
            lines.append(site["nav"])
        lines.append(title)
        src = origin["name"] if origin else (site["name"] if rng.random() < 0.6
                                             else self.sites[rng.randrange(len(self.sites))]["name"])
        head = f"{self.date()} 来源：{src}"
        if rng.random() < 0.4:
            head += f" 作者：{self.name()}"
        if rng.random() < 0.2:
            head += f" 阅读量：{rng.randint(100, 999999)}"
        lines.append(head)
        if rng.random() < 0.25:
            lines.append(site["share"])
        if rng.random() < 0.15:
            lines.append(f"原标题：{self.title()}")
        for k, p in enumerate(body):
            lines.append(p)
            if k and rng.random() < 0.04:
                lines.append("（图片来源：网络）")
        if origin or rng.random() < 0.25:
            lines.append((origin or site)["repost"])
        if rng.random() < 0.25:
            lines.append(site["disclaimer"])
        if rng.random() < 0.6:
            lines.append(f"（责任编辑：{self.name()}）")
        if rng.random() < 0.3:
            lines.append(site["app"])
        if rng.random() < 0.15:
            lines.append(rng.choice(["点击关注，第一时间了解更多资讯！❤️",
                                     "喜欢这篇文章，请点赞👍、在看、转发支持一下～",
                                     "你怎么看？欢迎在评论区留言讨论💬"]))
        if rng.random() < 0.3:
            lines.append("相关阅读：")
            lines.extend(self.title() for _ in range(rng.randint(3, 5)))
        if rng.random() < 0.35:
            lines.append(site["copyright"])
        return "\n".join(lines)

    def page(self):
        rng = self.rng
        kind = weighted(rng, [("fresh", 0.967), ("exact", 0.01), ("syndicated", 0.015),
                              ("updated", 0.008), ("quote-heavy", 0.01)])
        old = self.store.pick() if kind in ("exact", "syndicated", "updated") else None
        if old is None:
            kind = "fresh"
        if kind == "exact":
            return old["text"]
        if kind == "syndicated":
            body = old["body"]
            if rng.random() < 0.5 and len(body) > 2:
                half = max(1, len(body) // 2)
                a = rng.randint(0, len(body) - half)
                b = rng.randint(a + half, len(body))
                body = body[a:b]
            site = self.sites[rng.randrange(len(self.sites))]
            return self.render(site, old["title"], body, origin=self.sites[old["site"]])
        if kind == "updated":
            body = list(old["body"])
            for _ in range(rng.randint(1, 2)):
                body[rng.randrange(len(body))] = self.fresh_para()
            body.append(self.fresh_para())
            return self.render(self.sites[old["site"]], old["title"] + "（更新）", body)
        s = rng.randrange(len(self.sites))
        n = max(2, min(14, int(rng.lognormvariate(1.7, 0.45))))
        body = [self.fresh_para() for _ in range(n)]
        if kind == "quote-heavy" or rng.random() < 0.04:
            body.insert(rng.randint(1, len(body)), self.quote())
        title = self.title()
        text = self.render(self.sites[s], title, body)
        self.store.add(dict(site=s, title=title, body=body, text=text))
        return text


# ---------------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lang", choices=["en", "zh", "mix"], required=True)
    ap.add_argument("--size-mb", type=float, default=100.0,
                    help="stop once the file holds this many million bytes (default 100)")
    ap.add_argument("--out", required=True, help="output JSONL file")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", type=Path, default=None,
                    help="shared data folder (default $NEARDUP_DATA or ../shared/data beside "
                         "the repository)")
    args = ap.parse_args(argv)
    data = args.data or default_data_dir()
    if not (data / "reuters21578").is_dir():
        sys.exit(f"make_corpora: no shared data at {data} (use --data)")

    gens = {}
    if args.lang in ("en", "mix"):
        gens["en"] = English(data, random.Random(f"en-{args.seed}"))
    if args.lang in ("zh", "mix"):
        gens["zh"] = Chinese(data, random.Random(f"zh-{args.seed}"))
    target = int(args.size_mb * MB)
    written = {k: 0 for k in gens}
    count = {k: 0 for k in gens}
    total = 0
    tmp = args.out + ".part"
    with open(tmp, "w", encoding="utf-8", newline="\n") as out:
        while total < target:
            lang = min(gens, key=lambda k: (written[k], k))
            text = gens[lang].page()
            count[lang] += 1
            line = json.dumps({"id": f"{lang}-{count[lang]:07d}", "text": text},
                              ensure_ascii=False) + "\n"
            n = len(line.encode("utf-8"))
            out.write(line)
            written[lang] += n
            total += n
    os.replace(tmp, args.out)
    print(json.dumps({"out": args.out, "bytes": total, "docs": count, "bytes_by_lang": written}),
          file=sys.stderr)


if __name__ == "__main__":
    main()
