import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { EdgeMetrics } from '../../src/edge/index.ts';

describe('the edge request histogram', () => {
  it('counts each observation in its bucket (a value equal to a bound included), cumulative, with sum and count', async () => {
    const registry = new Registry();
    const metrics = new EdgeMetrics(registry);
    metrics.observeRequest('petstore', '2xx', 0.005);
    metrics.observeRequest('petstore', '2xx', 0.007);
    metrics.observeRequest('petstore', '2xx', 40);
    metrics.observeRequest('_unknown', '4xx', 0.3);
    const text = await registry.metrics();
    const lines = text.split('\n').filter((line) => line.startsWith('kennel_edge_request_duration_seconds'));
    const series = (project: string, status: string) =>
      lines
        .filter((line) => line.includes(`project="${project}",status_class="${status}"`))
        .map((line) => line.replace(`,project="${project}",status_class="${status}"`, ''));
    assert.deepEqual(series('petstore', '2xx'), [
      'kennel_edge_request_duration_seconds_bucket{le="0.005"} 1',
      'kennel_edge_request_duration_seconds_bucket{le="0.01"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="0.025"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="0.05"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="0.1"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="0.25"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="0.5"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="1"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="2.5"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="5"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="10"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="30"} 2',
      'kennel_edge_request_duration_seconds_bucket{le="+Inf"} 3',
      'kennel_edge_request_duration_seconds_sum{project="petstore",status_class="2xx"} 40.012',
      'kennel_edge_request_duration_seconds_count{project="petstore",status_class="2xx"} 3',
    ]);
    assert.ok(
      lines.includes(
        'kennel_edge_request_duration_seconds_bucket{le="0.25",project="_unknown",status_class="4xx"} 0',
      ),
    );
    assert.ok(
      lines.includes(
        'kennel_edge_request_duration_seconds_bucket{le="0.5",project="_unknown",status_class="4xx"} 1',
      ),
    );
    assert.match(text, /# TYPE kennel_edge_request_duration_seconds histogram/);
  });
});
