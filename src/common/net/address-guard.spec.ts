import { isPublicAddress } from './address-guard.js';

describe('isPublicAddress', () => {
  it.each([['8.8.8.8'], ['140.82.112.3'], ['2606:4700::1111'], ['2a00:1450:4001:80b::200e']])(
    'accepts the globally routable address %s',
    (address) => {
      expect(isPublicAddress(address)).toBe(true);
    },
  );

  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'RFC 1918'],
    ['172.16.0.1', 'RFC 1918'],
    ['192.168.1.1', 'RFC 1918'],
    ['169.254.169.254', 'the cloud metadata address'],
    ['100.64.0.1', 'CGNAT'],
    ['100.100.100.200', 'a metadata address in CGNAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fd00:ec2::254', 'unique-local (a metadata address)'],
    ['fe80::1', 'link-local'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::7f00:1', 'IPv4-compatible loopback'],
    ['::a00:1', 'IPv4-compatible private'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['2002:7f00:1::', '6to4 of loopback'],
    ['2001:db8::1', 'documentation'],
    ['not-an-address', 'not an address'],
  ])('refuses %s (%s)', (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });
});
