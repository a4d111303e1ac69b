import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  acmeChallengeName,
  displayHostname,
  normalizeHostname,
  ownershipRecordName,
  parseHostname,
} from '../../src/lib/hostname.ts';

const PLATFORM = { platformDomains: ['platform.test', 'Kennel.APP.'] };

describe('parseHostname: accepted and normalised', () => {
  const cases: [
    input: string,
    hostname: string,
    kind: 'apex' | 'subdomain',
    apex: string,
    sub: string | null,
  ][] = [
    ['shop.example.test', 'shop.example.test', 'subdomain', 'example.test', 'shop'],
    ['example.test', 'example.test', 'apex', 'example.test', null],
    ['www.example.co.uk', 'www.example.co.uk', 'subdomain', 'example.co.uk', 'www'],
    ['example.co.uk', 'example.co.uk', 'apex', 'example.co.uk', null],
    ['a.b.example.com', 'a.b.example.com', 'subdomain', 'example.com', 'a.b'],
    ['Shop.Example.TEST', 'shop.example.test', 'subdomain', 'example.test', 'shop'],
    ['shop.example.test.', 'shop.example.test', 'subdomain', 'example.test', 'shop'],
    ['  shop.example.test  ', 'shop.example.test', 'subdomain', 'example.test', 'shop'],
    ['bücher.example.test', 'xn--bcher-kva.example.test', 'subdomain', 'example.test', 'xn--bcher-kva'],
    ['BÜCHER.example.test', 'xn--bcher-kva.example.test', 'subdomain', 'example.test', 'xn--bcher-kva'],
    [
      'xn--bcher-kva.example.test',
      'xn--bcher-kva.example.test',
      'subdomain',
      'example.test',
      'xn--bcher-kva',
    ],
    ['straße.de', 'xn--strae-oqa.de', 'apex', 'xn--strae-oqa.de', null],
    ['ｓｈｏｐ.example.test', 'shop.example.test', 'subdomain', 'example.test', 'shop'],
    // eu.org is a private PSL suffix: foo.eu.org is registered under it, so it is an apex.
    ['foo.eu.org', 'foo.eu.org', 'apex', 'foo.eu.org', null],
    ['www.foo.eu.org', 'www.foo.eu.org', 'subdomain', 'foo.eu.org', 'www'],
    // Suffixes the list does not know: the last two labels are the registrable domain.
    ['api.shop.internal', 'api.shop.internal', 'subdomain', 'shop.internal', 'api'],
    ['1password.example.test', '1password.example.test', 'subdomain', 'example.test', '1password'],
    ['platform.testing', 'platform.testing', 'apex', 'platform.testing', null],
    [
      `${'a'.repeat(63)}.example.test`,
      `${'a'.repeat(63)}.example.test`,
      'subdomain',
      'example.test',
      'a'.repeat(63),
    ],
  ];
  for (const [input, hostname, kind, apex, subdomain] of cases) {
    it(`${JSON.stringify(input)} → ${hostname} (${kind})`, () => {
      const parsed = parseHostname(input, PLATFORM);
      assert.ok(parsed.ok, `refused: ${parsed.ok ? '' : parsed.message}`);
      assert.equal(parsed.hostname, hostname);
      assert.equal(parsed.kind, kind);
      assert.equal(parsed.apex, apex);
      assert.equal(parsed.subdomain, subdomain);
      assert.deepEqual(parsed.warnings, []);
    });
  }

  it('keeps the Unicode form for display', () => {
    const parsed = parseHostname('BÜCHER.example.test.');
    assert.ok(parsed.ok);
    assert.equal(parsed.unicode, 'bücher.example.test');
    const ascii = parseHostname('shop.example.test');
    assert.ok(ascii.ok);
    assert.equal(ascii.unicode, 'shop.example.test');
  });
});

describe('parseHostname: refused, with a reason', () => {
  const cases: [input: string, reason: string, messageIncludes: RegExp][] = [
    ['192.0.2.1', 'ip_address', /IP address/],
    ['192.0.2.1.', 'ip_address', /IP address/],
    ['2001:db8::1', 'ip_address', /IP address/],
    ['[2001:db8::1]', 'ip_address', /IP address/],
    ['::ffff:192.0.2.1', 'ip_address', /IP address/],
    ['１９２.０.２.１', 'ip_address', /IP address/],
    ['*.example.test', 'wildcard', /wildcard/],
    ['shop.*.example.test', 'wildcard', /wildcard/],
    ['platform.test', 'platform_domain', /is the platform's own domain platform\.test/],
    ['my-project.platform.test', 'platform_domain', /under the platform's own domain platform\.test/],
    ['a.b.kennel.app', 'platform_domain', /kennel\.app/],
    ['', 'invalid_hostname', /empty/],
    ['   ', 'invalid_hostname', /empty/],
    ['localhost', 'invalid_hostname', /two labels/],
    ['shop..example.test', 'invalid_hostname', /empty label/],
    ['.example.test', 'invalid_hostname', /empty label/],
    ['-shop.example.test', 'invalid_hostname', /hyphen/],
    ['shop-.example.test', 'invalid_hostname', /hyphen/],
    ['sh_op.example.test', 'invalid_hostname', /contains "_"/],
    ['shop example.test', 'invalid_hostname', /contains " "/],
    ['ex%41mple.test', 'invalid_hostname', /contains "%"/],
    ['https://shop.example.test/', 'invalid_hostname', /without https:\/\/ or a path/],
    ['shop.example.test/path', 'invalid_hostname', /path/],
    ['shop.example.test:8443', 'invalid_hostname', /port/],
    ['user@shop.example.test', 'invalid_hostname', /contains "@"/],
    [`${'a'.repeat(64)}.example.test`, 'invalid_hostname', /64 characters long \(at most 63\)/],
    [`${'abcdefghi.'.repeat(25)}example.test`, 'invalid_hostname', /262 characters long \(at most 253\)/],
    ['example.123', 'invalid_hostname', /top-level label is all digits/],
    ['192.0.2.999', 'invalid_hostname', /top-level label is all digits/],
    ['xn--zz.example.test', 'invalid_hostname', /not valid punycode/],
    ['co.uk', 'invalid_hostname', /public suffix/],
    ['github.io', 'invalid_hostname', /public suffix/],
  ];
  for (const [input, reason, message] of cases) {
    it(`${JSON.stringify(input)} → ${reason}`, () => {
      const parsed = parseHostname(input, PLATFORM);
      assert.equal(parsed.ok, false);
      assert.ok(!parsed.ok);
      assert.equal(parsed.reason, reason);
      assert.match(parsed.message, message);
    });
  }

  it('without configured platform domains, a platform-like name is an ordinary hostname', () => {
    assert.equal(parseHostname('my-project.platform.test').ok, true);
  });
});

describe('parseHostname: mixed scripts warning', () => {
  it('flags a label mixing Latin and Cyrillic (a Cyrillic "а" in paypal)', () => {
    const parsed = parseHostname('p\u0430ypal.example.test');
    assert.ok(parsed.ok);
    assert.equal(parsed.hostname, normalizeHostname('p\u0430ypal.example.test'));
    assert.equal(parsed.warnings.length, 1);
    const [warning] = parsed.warnings;
    assert.equal(warning?.code, 'mixed_scripts');
    assert.equal(warning?.label, 'p\u0430ypal');
    assert.deepEqual(warning?.scripts, ['Latin', 'Cyrillic']);
    assert.match(warning?.message ?? '', /mixes Latin and Cyrillic/);
  });

  it('flags Latin with Greek', () => {
    const parsed = parseHostname('g\u03bfogle.example.test');
    assert.ok(parsed.ok);
    assert.deepEqual(parsed.warnings[0]?.scripts, ['Latin', 'Greek']);
  });

  const clean = [
    'пример.example.test', // all Cyrillic
    'bücher.example.test', // all Latin
    'пример-2.example.test', // digits and hyphen belong to every script
    '日本語とカタカナ.example.test', // Han, Hiragana and Katakana: how Japanese is written
    'abc日本.example.test', // Latin with Han is allowed too (UTS #39 highly restrictive)
    'пример.bücher.test', // scripts are compared within a label, not across labels
  ];
  for (const input of clean) {
    it(`no warning for ${input}`, () => {
      const parsed = parseHostname(input);
      assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
      assert.deepEqual(parsed.warnings, []);
    });
  }
});

describe('normalizeHostname and the name builders', () => {
  const cases: [string, string][] = [
    ['App.Platform.Test.', 'app.platform.test'],
    ['bücher.example.test', 'xn--bcher-kva.example.test'],
    ['_kennel-challenge.Example.Test', '_kennel-challenge.example.test'],
    ['xn--bcher-kva.example.test', 'xn--bcher-kva.example.test'],
  ];
  for (const [input, expected] of cases) {
    it(`normalizeHostname(${JSON.stringify(input)}) → ${expected}`, () => {
      assert.equal(normalizeHostname(input), expected);
    });
  }

  it('displays punycode in Unicode', () => {
    assert.equal(displayHostname('xn--bcher-kva.example.test'), 'bücher.example.test');
    assert.equal(displayHostname('shop.example.test'), 'shop.example.test');
  });

  it('builds the ownership and ACME challenge names', () => {
    assert.equal(ownershipRecordName('example.test'), '_kennel-challenge.example.test');
    assert.equal(acmeChallengeName('shop.example.test'), '_acme-challenge.shop.example.test');
  });
});
