import { Inject, Injectable, Optional } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { RefinesOpenApi, type OpenApiRefinement } from '../../common/openapi-refinement.js';
import { TESTING_SERVICE_CATALOG, type TestingServiceCatalog } from '../../crates/index.js';
import { NewInstanceServiceDto } from './instance-requests.dto.js';
import { TestServiceDto } from './suite-response.dto.js';

/** The enum of a test service's `type` (in replies and in new instances): the registered CI services, known once the app runs. */
@RefinesOpenApi()
@Injectable()
export class ServiceTypeSchema implements OpenApiRefinement {
  constructor(
    @Optional()
    @Inject(TESTING_SERVICE_CATALOG)
    private readonly catalog: TestingServiceCatalog | null = null,
  ) {}

  refineOpenApi(document: OpenAPIObject): void {
    const types = (this.catalog?.serviceTypes() ?? []).map((service) => service.type);
    for (const schema of [TestServiceDto.name, NewInstanceServiceDto.name]) {
      const property = document.components?.schemas?.[schema];
      const type = property && 'properties' in property ? property.properties?.type : undefined;
      if (type === undefined || '$ref' in type) {
        continue;
      }
      type.enum = types;
      type.example = types[0];
    }
  }
}
